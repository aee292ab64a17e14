// stack-busy-go.go: stack-busy.c in Go, for tests/cli/stacks-busy.sh.
// The main goroutine, locked to the main thread, sends a request down
// one pipe and blocks in waitForReply() reading the reply from another;
// a goroutine locked to a thread of its own, woken by the request,
// computes for about 1.5 s in computeHard() without a system call, then
// writes the reply in sendReply(). The pipes are syscall.Pipe's, read
// and written with syscall.Read and syscall.Write: blocking calls that
// keep the goroutine on its thread, where os.Pipe's would park it in the
// netpoller and its stack would show the runtime's wait, not this code.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// rounds of computeHard's loop that take about 1.5 s (a count, not a
// clock: the loop makes no call at all)
const rounds = 1100000000

var req, rep [2]int

func init() {
	runtime.LockOSThread()
}

// computeHard returns a number from n rounds of an xorshift generator.
//
//go:noinline
func computeHard(n uint64) uint64 {
	x := uint64(88172645463325252)
	for i := uint64(0); i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

//go:noinline
func sendReply(v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	_, err := syscall.Write(rep[1], b[:])
	return err
}

func worker() {
	runtime.LockOSThread()
	var b [8]byte
	if n, err := syscall.Read(req[0], b[:]); n != 8 || err != nil {
		return
	}
	sendReply(computeHard(binary.LittleEndian.Uint64(b[:])))
}

//go:noinline
func waitForReply() (uint64, error) {
	var b [8]byte
	n, err := syscall.Read(rep[0], b[:])
	if n != 8 && err == nil {
		err = fmt.Errorf("short reply (%d bytes)", n)
	}
	return binary.LittleEndian.Uint64(b[:]), err
}

func main() {
	if syscall.Pipe(req[:]) != nil || syscall.Pipe(rep[:]) != nil {
		os.Exit(1)
	}
	go worker()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], rounds)
	if _, err := syscall.Write(req[1], b[:]); err != nil {
		os.Exit(1)
	}
	v, err := waitForReply()
	if err != nil {
		fmt.Println("no reply:", err)
		os.Exit(1)
	}
	fmt.Printf("replied %x\n", v)
}
