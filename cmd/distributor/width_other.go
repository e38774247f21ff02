//go:build !unix

package main

import "io"

// terminalWidth reports 0 (unknown): help then reads $COLUMNS.
func terminalWidth(io.Writer) int { return 0 }
