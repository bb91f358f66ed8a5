package bench

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progressEvery is how often a running benchmark's progress line is redrawn.
const progressEvery = 200 * time.Millisecond

// progressLineEvery is the longest time between two lines of the line-per-group
// progress (Config.ProgressLines) while one group runs.
const progressLineEvery = 10 * time.Second

// progress draws "[i/n] name  elapsed" on one line, rewritten in place, or with
// lines set writes such a line when a group of benchmarks starts and then at
// least every progressLineEvery. A nil *progress draws nothing.
type progress struct {
	w     io.Writer
	lines bool
	total int
	start time.Time
	i     int
	name  string
	group string
	last  time.Time
	width int // of the last line, to blank it
}

func newProgress(w io.Writer, lines bool, total int, start time.Time) *progress {
	if w == nil {
		return nil
	}
	return &progress{w: w, lines: lines, total: total, start: start}
}

// begin shows that benchmark i (0: the reference) of group starts.
func (p *progress) begin(i int, name, group string) {
	if p == nil {
		return
	}
	p.i, p.name = i, name
	if p.lines {
		if group != p.group || time.Since(p.last) >= progressLineEvery {
			p.group = group
			p.draw()
		}
		return
	}
	p.draw()
}

func (p *progress) tick() {
	if p == nil {
		return
	}
	if p.lines {
		if time.Since(p.last) >= progressLineEvery {
			p.draw()
		}
		return
	}
	if time.Since(p.last) >= progressEvery {
		p.draw()
	}
}

func (p *progress) draw() {
	p.last = time.Now()
	pos := fmt.Sprintf("%d/%d", p.i, p.total)
	if p.i == 0 {
		pos = "ref"
	}
	line := fmt.Sprintf("[%s] %s  %s", pos, p.name, time.Since(p.start).Round(100*time.Millisecond))
	if p.lines {
		fmt.Fprintf(p.w, "gpubench: %s\n", line)
		return
	}
	pad := p.width - len(line)
	p.width = len(line)
	if pad < 0 {
		pad = 0
	}
	fmt.Fprintf(p.w, "\r%s%*s", line, pad, "")
}

// done blanks the line (the line-per-group progress writes nothing more).
func (p *progress) done() {
	if p == nil || p.lines || p.width == 0 {
		return
	}
	fmt.Fprintf(p.w, "\r%*s\r", p.width, "")
}

// ProgressTo returns where Main shows progress for a stderr: stderr itself with
// the line rewritten in place when it is a terminal, or stderr with a line per
// group of benchmarks (lines) when it is another file (a pipe to tee, a log
// file), so that a run writing its table to a file still shows that it runs;
// nil with quiet (-q) or when stderr is not a file.
func ProgressTo(stderr io.Writer, quiet bool) (w io.Writer, lines bool) {
	f, ok := stderr.(*os.File)
	if !ok || quiet || f == nil {
		return nil, false
	}
	return f, !IsTerminal(f)
}

// IsTerminal reports whether f looks like a terminal (a character device),
// the test for drawing a progress line on stderr.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
