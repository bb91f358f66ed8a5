package bench

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progressEvery is how often a running benchmark's progress line is redrawn.
const progressEvery = 200 * time.Millisecond

// progress draws "[i/n] name  elapsed" on one line, rewritten in place. A nil
// *progress draws nothing.
type progress struct {
	w     io.Writer
	total int
	start time.Time
	i     int
	name  string
	last  time.Time
	width int // of the last line, to blank it
}

func newProgress(w io.Writer, total int, start time.Time) *progress {
	if w == nil {
		return nil
	}
	return &progress{w: w, total: total, start: start}
}

func (p *progress) begin(i int, name string) {
	if p == nil {
		return
	}
	p.i, p.name = i, name
	p.draw()
}

func (p *progress) tick() {
	if p == nil || time.Since(p.last) < progressEvery {
		return
	}
	p.draw()
}

func (p *progress) draw() {
	p.last = time.Now()
	pos := fmt.Sprintf("%d/%d", p.i, p.total)
	if p.i == 0 {
		pos = "ref"
	}
	line := fmt.Sprintf("[%s] %s  %s", pos, p.name, time.Since(p.start).Round(100*time.Millisecond))
	pad := p.width - len(line)
	p.width = len(line)
	if pad < 0 {
		pad = 0
	}
	fmt.Fprintf(p.w, "\r%s%*s", line, pad, "")
}

// done blanks the line.
func (p *progress) done() {
	if p == nil || p.width == 0 {
		return
	}
	fmt.Fprintf(p.w, "\r%*s\r", p.width, "")
}

// IsTerminal reports whether f looks like a terminal (a character device),
// the test for drawing a progress line on stderr.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
