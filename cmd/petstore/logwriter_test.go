package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLogLinesAreWrittenWithinTheFlushInterval(t *testing.T) {
	var out syncBuffer
	w := newLogWriter(&out, 300*time.Millisecond)
	w.Write([]byte("one\n"))
	if out.String() != "" {
		t.Fatal("a line was written at once, not batched")
	}
	deadline := time.Now().Add(2 * time.Second)
	for out.String() != "one\n" {
		if time.Now().After(deadline) {
			t.Fatalf("after 2 s the output is %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.Write([]byte("two\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != "one\ntwo\n" {
		t.Fatalf("after Close the output is %q", out.String())
	}
}

func TestAFullLogBufferIsWrittenAtOnce(t *testing.T) {
	var out syncBuffer
	w := newLogWriter(&out, time.Hour)
	defer w.Close()
	line := strings.Repeat("x", 1023) + "\n"
	for range 40 {
		w.Write([]byte(line))
	}
	if len(out.String()) < 32<<10 {
		t.Fatalf("after 40 KiB of lines only %d bytes were written", len(out.String()))
	}
}

// failOnce fails its first write, then takes everything.
type failOnce struct {
	failed bool
	out    syncBuffer
}

func (f *failOnce) Write(p []byte) (int, error) {
	if !f.failed {
		f.failed = true
		return 0, errors.New("the pipe is full")
	}
	return f.out.Write(p)
}

func TestAFailedLogWriteDoesNotSilenceLaterLines(t *testing.T) {
	f := &failOnce{}
	w := newLogWriter(f, time.Hour)
	w.Write([]byte("lost\n"))
	if err := w.Flush(); err == nil {
		t.Fatal("the failed write was not reported")
	}
	w.Write([]byte("kept\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if f.out.String() != "kept\n" {
		t.Fatalf("written after the failure: %q", f.out.String())
	}
}
