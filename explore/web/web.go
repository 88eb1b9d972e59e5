// Package web holds the explorer's web application: the page, its script
// and styles, and the graph-layout library it uses, embedded so that
// `analyze serve` and `analyze report` need no network.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var files embed.FS

// Assets returns the application's files, rooted at the static folder
// (index.html at its top).
func Assets() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the folder is embedded at build time
	}
	return sub
}
