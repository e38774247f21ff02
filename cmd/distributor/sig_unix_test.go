//go:build unix

package main

import "syscall"

// sigStop and sigCont pause and resume a process (the fencing tests).
var sigStop, sigCont = syscall.SIGSTOP, syscall.SIGCONT
