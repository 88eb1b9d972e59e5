//go:build unix

package testprog

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// errNotOwner is returned by checkOwner for a directory of another user.
var errNotOwner = errors.New("not owned by the current user")

// checkOwner fails unless dir is a directory (not a symbolic link) owned by
// the current user.
func checkOwner(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: not a directory", dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s: %w (owner uid %d); remove it", dir, errNotOwner, st.Uid)
	}
	return nil
}
