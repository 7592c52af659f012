package main

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// logWriter batches log output: lines reach the underlying writer when the buffer
// fills or at most every interval, and at Close. A busy server writes one log line per
// request; written one by one, they would cost a system call each.
type logWriter struct {
	mu   sync.Mutex
	w    io.Writer
	buf  *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

// logFlushInterval is the longest a log line waits in the buffer.
const logFlushInterval = 100 * time.Millisecond

func newLogWriter(w io.Writer, every time.Duration) *logWriter {
	l := &logWriter{w: w, buf: bufio.NewWriterSize(w, 32<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				l.Flush()
			}
		}
	}()
	return l
}

// Write adds p (one log record: slog handlers write each record whole) to the buffer.
func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.buf.Write(p)
	l.recover(err)
	return n, err
}

// Flush writes out what the buffer holds.
func (l *logWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.buf.Flush()
	l.recover(err)
	return err
}

// recover starts the buffer afresh after a failed write, which a bufio.Writer would
// otherwise repeat for ever: one failure (a full pipe) would silence every later
// line. What the buffer held is lost. Callers hold l.mu.
func (l *logWriter) recover(err error) {
	if err != nil {
		l.buf.Reset(l.w)
	}
}

// Close stops the periodic flush and writes out the rest.
func (l *logWriter) Close() error {
	close(l.stop)
	<-l.done
	return l.Flush()
}
