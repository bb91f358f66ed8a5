package gpu

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Printing arrays.
//
// fmt prints an array's values (Array.Format), laid out as NumPy's str() lays them
// out: nested brackets, one row per line, elements right-aligned to one width, rows
// wrapped at 75 characters, and, for an array of more than PrintThreshold elements,
// only the first and last PrintEdgeItems indices of each axis longer than
// 2*PrintEdgeItems, with "..." between (numpy.set_printoptions' threshold=1000 and
// edgeitems=3). Each element is printed as fmt prints a value of its Go type, so
// float32(0.1) is 0.1, bools are true and false, and Float16 and BFloat16 print the
// shortest decimal that rounds back to them (package half's String).
//
// Reading the values is a host read (ToSlice of the elements shown, only those), so
// fmt waits for the writes pending on the array, on any stream, with
// context.Background(): without a deadline, and without pinning an OS thread. Text does
// the same under a context and returns the read's error; %#v prints the description
// alone and reads nothing.

// PrintThreshold and PrintEdgeItems are NumPy's default print options (threshold and
// edgeitems): an array of more than PrintThreshold elements prints the first and last
// PrintEdgeItems indices of each axis longer than 2*PrintEdgeItems.
const (
	PrintThreshold = 1000
	PrintEdgeItems = 3
)

// printLineWidth is NumPy's default linewidth: rows wrap before it.
const printLineWidth = 75

// describe returns "Array[float32](2, 3) on cuda:0" ("<nil array>" for a nil array).
func (a *Array[T]) describe() string {
	if a.isNil() {
		return "<nil array>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Array[%v](", a.dt)
	for i, n := range a.shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(n))
	}
	info := a.Device().info
	fmt.Fprintf(&b, ") on %s:%d", info.Backend, info.Ordinal)
	return b.String()
}

// String returns the array's values as fmt's %v prints them (see Format), "<nil
// array>" for a nil array: a host read that waits for the array's pending writes
// without a deadline. Use Text to read under a context, and fmt's %#v (or Shape,
// DType and Device) for the description without reading.
func (a *Array[T]) String() string { return fmt.Sprint(a) }

// Text returns the array's values laid out as fmt's %v prints them (see Format),
// reading them under ctx: only the elements shown, so printing a large array copies
// at most 2*PrintEdgeItems indices of each axis. The error is the read's (a freed
// array: ErrClosed; a nil array: ErrInvalidValue; ctx's error; a device fault), with
// an empty string.
func (a *Array[T]) Text(ctx context.Context) (string, error) {
	if err := nilContext(ctx); err != nil {
		return "", err
	}
	p, err := a.printed(ctx)
	if err != nil {
		return "", err
	}
	return p.layout("%v", false), nil
}

// Format implements fmt.Formatter, so that fmt prints the array's values:
//
//	fmt.Println(a)            // [[1 2 3]
//	                          //  [4 5 6]]
//	fmt.Printf("%+v\n", a)    // Array[float32](2, 3) on cpu:0
//	                          // [[1 2 3]
//	                          //  [4 5 6]]
//	fmt.Printf("%.2f\n", a)   // [[1.00 2.00 3.00]
//	                          //  [4.00 5.00 6.00]]
//	fmt.Printf("%#v\n", a)    // Array[float32](2, 3) on cpu:0 (reads nothing)
//
// %v and %s print the values in NumPy's layout (see PrintThreshold); %+v puts the
// description (element type, shape, device) first, on the same line when the values
// fit on one; any other verb, with its flags, width and precision, formats each
// element as fmt would format a slice's (%d, %x, %.3e, %t ...), in the same layout. A
// 0-d array prints its element alone, an empty one "[]". Reading the values waits for
// the array's pending writes with context.Background() (see String); an array that
// can't be read (freed, its device faulted) prints "%!v(" followed by the
// description and the error, ")", and a nil array "<nil array>": printing never
// panics.
func (a *Array[T]) Format(f fmt.State, verb rune) {
	if a.isNil() {
		f.Write([]byte("<nil array>"))
		return
	}
	if verb == 'v' && f.Flag('#') {
		f.Write([]byte(a.describe()))
		return
	}
	header := verb == 'v' && f.Flag('+')
	p, err := a.printed(context.Background())
	if err != nil {
		fmt.Fprintf(f, "%%!%c(%s: %v)", verb, a.describe(), err)
		return
	}
	s := p.layout(elemFormat(f, verb), f.Flag('-'))
	if header {
		sep := " "
		if strings.Contains(s, "\n") {
			sep = "\n"
		}
		s = a.describe() + sep + s
	}
	f.Write([]byte(s))
}

// elemFormat returns the format of one element for verb with f's flags, width and
// precision (%v for %s and %+v, whose flag selects the description).
func elemFormat(f fmt.State, verb rune) string {
	b := []byte{'%'}
	for _, c := range "-+# 0" {
		if !f.Flag(int(c)) || (verb == 'v' || verb == 's') && (c == '+' || c == '#') {
			continue
		}
		b = append(b, byte(c))
	}
	if w, ok := f.Width(); ok {
		b = strconv.AppendInt(b, int64(w), 10)
	}
	if p, ok := f.Precision(); ok {
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(p), 10)
	}
	if verb == 's' {
		verb = 'v' // a number has no %s; NumPy's str is %v's layout
	}
	return string(utf8.AppendRune(b, verb))
}

// printedArray is the part of an array that prints: the shown shape (each summarized
// axis 2*PrintEdgeItems long) and its values, row-major.
type printedArray[T Elem] struct {
	shape   []int
	summary []bool // per axis: "..." between the leading and trailing indices
	vals    []T
}

// printed reads the elements a prints under ctx: all of them, or for an array of more
// than PrintThreshold elements the first and last PrintEdgeItems indices of each axis
// longer than 2*PrintEdgeItems.
func (a *Array[T]) printed(ctx context.Context) (*printedArray[T], error) {
	if a.isNil() {
		return nil, errNilArray
	}
	if a.isFreed() {
		return nil, fmt.Errorf("gpu: printing an array used after Free: %w", ErrClosed)
	}
	nd := len(a.shape)
	p := &printedArray[T]{shape: make([]int, nd), summary: make([]bool, nd)}
	copy(p.shape, a.shape)
	if a.Size() == 0 {
		return p, nil
	}
	var summarized []int
	if a.Size() > PrintThreshold {
		for d, n := range a.shape {
			if n > 2*PrintEdgeItems {
				p.summary[d], p.shape[d] = true, 2*PrintEdgeItems
				summarized = append(summarized, d)
			}
		}
	}
	if len(summarized) == 0 {
		vals, err := a.ToSlice(ctx)
		if err != nil {
			return nil, err
		}
		p.vals = vals
		return p, nil
	}
	// One read per corner: each summarized axis's leading or trailing indices.
	p.vals = make([]T, prod(p.shape))
	outStrides := rowMajor(p.shape)
	ranges := make([]Range, nd)
	for corner := range 1 << len(summarized) {
		base := 0
		for d := range ranges {
			ranges[d] = R()
		}
		for k, d := range summarized {
			if corner>>k&1 == 0 {
				ranges[d] = R(0, PrintEdgeItems)
			} else {
				ranges[d] = R(a.shape[d]-PrintEdgeItems, End)
				base += PrintEdgeItems * outStrides[d]
			}
		}
		v, err := a.Slice(ranges...)
		if err != nil {
			return nil, err
		}
		vals, err := v.ToSlice(ctx)
		if err != nil {
			return nil, err
		}
		// Scatter the corner (row-major over v's shape) into p.vals.
		idx := make([]int, nd)
		for _, x := range vals {
			off := base
			for d, i := range idx {
				off += i * outStrides[d]
			}
			p.vals[off] = x
			for d := nd - 1; d >= 0; d-- {
				if idx[d]++; idx[d] < v.shape[d] {
					break
				}
				idx[d] = 0
			}
		}
	}
	return p, nil
}

// layout lays the values out as numpy.array2string does for str() (its _formatArray,
// with separator " " and linewidth 75), each element formatted with format and
// aligned right (left with leftAlign) to the widest.
func (p *printedArray[T]) layout(format string, leftAlign bool) string {
	if len(p.shape) > 0 && len(p.vals) == 0 {
		return "[]"
	}
	words := make([]string, len(p.vals))
	width := 0
	for i, v := range p.vals {
		words[i] = fmt.Sprintf(format, v)
		width = max(width, utf8.RuneCountInString(words[i]))
	}
	for i, w := range words {
		pad := strings.Repeat(" ", width-utf8.RuneCountInString(w))
		if leftAlign {
			words[i] = w + pad
		} else {
			words[i] = pad + w
		}
	}
	if len(p.shape) == 0 {
		return words[0]
	}
	l := textLayout{shape: p.shape, summary: p.summary, words: words, strides: rowMajor(p.shape)}
	return l.array(0, 0, " ", printLineWidth)
}

// textLayout is numpy's _formatArray over formatted words.
type textLayout struct {
	shape   []int
	summary []bool
	words   []string
	strides []int
}

// array lays out the sub-array at axis, whose first element is words[off], with the
// hanging indent of its continuation lines and the width left for it.
func (l *textLayout) array(axis, off int, hanging string, width int) string {
	if axis == len(l.shape) {
		return l.words[off]
	}
	nextHanging, nextWidth := hanging+" ", width-len("]")
	n, st := l.shape[axis], l.strides[axis]
	lead, trail := 0, n // the leading indices, and from where the trailing ones count
	if l.summary[axis] {
		lead, trail = PrintEdgeItems, PrintEdgeItems
	}
	sub := func(i int) string { return l.array(axis+1, off+i*st, nextHanging, nextWidth) }
	var s strings.Builder
	if axis == len(l.shape)-1 {
		// The last axis: elements on lines wrapped before the width.
		elemWidth := width - len("]")
		line := hanging
		add := func(word string) {
			// (NumPy doesn't wrap a line that holds only the indent: it wouldn't help.)
			if utf8.RuneCountInString(line)+utf8.RuneCountInString(word) > elemWidth && len(line) > len(hanging) {
				s.WriteString(strings.TrimRight(line, " "))
				s.WriteByte('\n')
				line = hanging
			}
			line += word
		}
		for i := range lead {
			add(sub(i))
			line += " "
		}
		if l.summary[axis] {
			add("...")
			line += " "
		}
		for i := trail; i > 1; i-- {
			add(sub(n - i))
			line += " "
		}
		add(sub(n - 1))
		s.WriteString(line)
	} else {
		// Other axes: sub-arrays on lines of their own, blank lines between blocks of
		// three or more dimensions.
		lineSep := strings.Repeat("\n", len(l.shape)-axis-1)
		for i := range lead {
			s.WriteString(hanging + sub(i) + lineSep)
		}
		if l.summary[axis] {
			s.WriteString(hanging + "..." + lineSep)
		}
		for i := trail; i > 1; i-- {
			s.WriteString(hanging + sub(n-i) + lineSep)
		}
		s.WriteString(hanging + sub(n-1))
	}
	return "[" + s.String()[len(hanging):] + "]"
}
