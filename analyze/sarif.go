package main

import (
	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/internal/sarif"
)

// sarifRootFlag defines --sarif-root, shared by the subcommands with
// --format sarif.
func sarifRootFlag(fs *pflag.FlagSet, root *string) {
	fs.StringVar(root, "sarif-root", "", "with --format sarif, name source files under `DIR` relative to it (default: the git work tree that holds the current folder, else the current folder); others as file:// URIs")
}

// sarifLocator returns the locator of source files for a SARIF log: root,
// or the repository that holds the current folder.
func sarifLocator(root string) (*sarif.Locator, error) {
	if root == "" {
		root = sarif.RepoRoot(".")
	}
	return sarif.NewLocator(root)
}
