//go:build !linux

package bundle

import (
	"context"
	"os"
)

// fileOpener is Bundle.open's Linux fast path (open_linux.go); elsewhere openRegular opens every file.
type fileOpener struct{ dir string }

func (*fileOpener) open(string) (*os.File, bool) { return nil, false }

func (*fileOpener) close() {}

func walkBundleFast(context.Context, string, *Manifest) ([]string, map[string]int64, bool, error) {
	return nil, nil, false, nil
}
