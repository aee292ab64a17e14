// block-often-go.go: a Go program whose OS threads block and wake very
// often, for the recorder's cost on threads without rseq (Go registers
// none): tests/bench/record-overhead.sh runs it. With GOMAXPROCS=2, at
// once: pairs of goroutines hand a token back and forth over unbuffered
// channels (the runtime parks and wakes its threads on futexes when a
// processor runs dry), and pairs that hand a byte back and forth over
// two pipes read with syscall.Read, a blocking call that keeps the
// goroutine on its thread (each turn blocks a thread in read(2), and the
// runtime hands the processor to another thread meanwhile). Prints the
// time it took: "elapsed: 1.234 s".
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// chanPairs, pipePairs: the pairs of each kind; turns: the round trips
// of each pair (a count, the same work whatever the machine)
const (
	chanPairs = 4
	pipePairs = 2
)

// chanPingPong hands a token n times back and forth between two
// goroutines over unbuffered channels.
func chanPingPong(n int, wg *sync.WaitGroup) {
	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			pong <- v + 1
		}
		close(pong)
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			ping <- i
			<-pong
		}
		close(ping)
	}()
}

// pipePingPong hands a byte n times back and forth between two
// goroutines, each blocking in read(2) on its own pipe.
func pipePingPong(n int, wg *sync.WaitGroup) error {
	var a, b [2]int
	if err := syscall.Pipe(a[:]); err != nil {
		return err
	}
	if err := syscall.Pipe(b[:]); err != nil {
		return err
	}
	turn := func(in, out int, first bool) {
		buf := []byte{0}
		for i := 0; i < n; i++ {
			if first {
				syscall.Write(out, buf)
				syscall.Read(in, buf)
			} else {
				syscall.Read(in, buf)
				syscall.Write(out, buf)
			}
		}
	}
	go func() {
		defer wg.Done()
		turn(a[0], b[1], true)
	}()
	go turn(b[0], a[1], false)
	return nil
}

func main() {
	n := 20000
	if len(os.Args) > 1 {
		v, err := strconv.Atoi(os.Args[1])
		if err != nil || v <= 0 {
			fmt.Fprintln(os.Stderr, "usage: block-often-go [TURNS]")
			os.Exit(2)
		}
		n = v
	}
	runtime.GOMAXPROCS(2)
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(chanPairs + pipePairs)
	for i := 0; i < chanPairs; i++ {
		chanPingPong(n*10, &wg)
	}
	for i := 0; i < pipePairs; i++ {
		if err := pipePingPong(n, &wg); err != nil {
			fmt.Fprintln(os.Stderr, "pipe:", err)
			os.Exit(1)
		}
	}
	wg.Wait()
	fmt.Printf("elapsed: %.3f s\n", time.Since(start).Seconds())
}
