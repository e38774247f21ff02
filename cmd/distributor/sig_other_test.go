//go:build !unix

package main

import "os"

// sigStop and sigCont do not exist here: the fencing tests that pause a
// process fail to send them (they run on Linux; other platforms are
// build- and vet-checked only).
var sigStop, sigCont os.Signal = os.Interrupt, os.Interrupt
