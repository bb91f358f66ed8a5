package ptxsim

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Parsing: the module text is cut into statements (ending in ';'), block braces and
// labels, then read as directives, function headers and instructions.

type tokKind uint8

const (
	tStmt tokKind = iota
	tOpen
	tClose
	tLabel
	tHeader // a function header followed by its body
)

type token struct {
	kind tokKind
	text string
	line int
}

func stripComments(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		switch {
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			if i < len(src) {
				b.WriteByte('\n')
			}
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return b.String()
			}
			b.WriteString(strings.Repeat("\n", strings.Count(src[i:i+2+j+2], "\n")))
			i += 2 + j + 1
		default:
			b.WriteByte(src[i])
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		ok := c == '_' || c == '$' || c == '%' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}

func tokenize(src string) []token {
	src = stripComments(src)
	var toks []token
	var buf strings.Builder
	depth := 0 // braces and parentheses inside a statement
	line := 1
	startLine := 1
	flush := func(k tokKind) {
		s := strings.TrimSpace(buf.String())
		buf.Reset()
		if s != "" || k != tStmt {
			toks = append(toks, token{k, s, startLine})
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if strings.TrimSpace(buf.String()) == "" {
			startLine = line
		}
		switch c {
		case '\n':
			line++
			// .version, .target and .address_size end at the line's end, not at a ';'.
			if s := strings.TrimSpace(buf.String()); depth == 0 && (strings.HasPrefix(s, ".version") ||
				strings.HasPrefix(s, ".target") || strings.HasPrefix(s, ".address_size")) {
				buf.Reset()
				continue
			}
			buf.WriteByte(' ')
		case ';':
			if depth == 0 {
				flush(tStmt)
				continue
			}
			buf.WriteByte(c)
		case '{':
			s := strings.TrimSpace(buf.String())
			switch {
			case s == "":
				toks = append(toks, token{tOpen, "", line})
			case depth == 0 && strings.HasPrefix(s, ".") && !strings.Contains(s, "="):
				flush(tHeader)
				toks = append(toks, token{tOpen, "", line})
			default:
				depth++
				buf.WriteByte(c)
			}
		case '}':
			if depth > 0 {
				depth--
				buf.WriteByte(c)
				continue
			}
			flush(tStmt)
			toks = append(toks, token{tClose, "", line})
		case '(', '[':
			depth++
			buf.WriteByte(c)
		case ')', ']':
			depth--
			buf.WriteByte(c)
		case ':':
			s := strings.TrimSpace(buf.String())
			if depth == 0 && isIdent(s) && (i+1 >= len(src) || src[i+1] != ':') && (i == 0 || src[i-1] != ':') {
				buf.Reset()
				toks = append(toks, token{tLabel, s, line})
				continue
			}
			buf.WriteByte(c)
		default:
			buf.WriteByte(c)
		}
	}
	flush(tStmt)
	return toks
}

// Module is a parsed PTX module.
type Module struct {
	funcs   map[string]*Func
	entries []*Func
	syms    map[string]uint64 // .global and .const variables: addresses
	gbase   uint64
	gsize   uint64
	gdata   []byte
	shared  map[string]int  // module-scope .shared variables: offsets
	smem    int             // their bytes
	extern  map[string]bool // .extern .shared arrays (the dynamic shared memory)
}

// Entries returns the module's kernels in the order of the text.
func (m *Module) Entries() []*Func { return m.entries }

// Func returns the kernel or device function named name, or nil.
func (m *Module) Func(name string) *Func { return m.funcs[name] }

// Param is a parameter of a kernel or device function: its name, its type as written
// without the dot ("u64", "f32", "b8" for byte arrays) and its size in bytes.
type Param struct {
	Name string
	Type string
	Size int
}

// Func is a kernel or a device function.
type Func struct {
	Name   string
	Entry  bool
	Params []Param
	Rets   []Param

	mod      *Module
	regIdx   map[string]int
	regWidth []int
	prog     []*inst
	labels   map[string]int
	paramIdx map[string]int // a kernel's parameters by name
	shared   map[string]int // kernel-scope .shared variables: offsets after the module's
	smem     int            // static shared memory: the module's and the kernel's
	blockMu  sync.Mutex
	blocks   []*block // for the next launches (a sync.Pool drops them under -race)
}

// inst is one compiled instruction (the fields the run loop reads first).
type inst struct {
	exec   execFn
	args   []opnd
	guard  int32 // predicate register, or -1
	gneg   bool
	coll   *collective // warp-synchronous and block-wide instructions
	text   string
	op     string
	parts  []string
	callee string
}

// globalBase is where a module's .global and .const variables live.
const globalBase = 0x7e00_0000_0000

// Parse parses a PTX module: its module-scope variables, device functions and kernels.
func Parse(src string) (*Module, error) {
	m := &Module{funcs: map[string]*Func{}, syms: map[string]uint64{}, gbase: globalBase,
		shared: map[string]int{}, extern: map[string]bool{}}
	toks := tokenize(src)
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		switch tk.kind {
		case tHeader:
			f, err := parseHeader(tk.text)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", tk.line, err)
			}
			f.mod, f.smem = m, m.smem
			if i+1 >= len(toks) || toks[i+1].kind != tOpen {
				return nil, fmt.Errorf("line %d: function %s without a body", tk.line, f.Name)
			}
			j, err := f.parseBody(toks, i+2)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", f.Name, err)
			}
			i = j
			if m.funcs[f.Name] != nil {
				return nil, fmt.Errorf("line %d: function %s defined twice", tk.line, f.Name)
			}
			m.funcs[f.Name] = f
			if f.Entry {
				m.entries = append(m.entries, f)
			}
		case tStmt:
			s := tk.text
			var err error
			switch {
			case s == "":
			case strings.HasPrefix(s, ".version"), strings.HasPrefix(s, ".target"), strings.HasPrefix(s, ".address_size"):
			case strings.Contains(s, ".func") || strings.Contains(s, ".entry"):
				// a prototype
			case strings.Contains(s, ".shared"):
				err = parseShared(s, m.shared, &m.smem, m.extern)
			case strings.Contains(s, ".global"), strings.Contains(s, ".const"):
				err = m.parseVar(s)
			default:
				err = fmt.Errorf("unsupported module-scope statement %q", s)
			}
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", tk.line, err)
			}
		default:
			return nil, fmt.Errorf("line %d: unexpected token %q", tk.line, tk.text)
		}
	}
	for _, f := range m.funcs {
		for _, in := range f.prog {
			if in.callee != "" && m.funcs[in.callee] == nil {
				return nil, fmt.Errorf("%s: call of undefined function %s", f.Name, in.callee)
			}
		}
	}
	return m, nil
}

// parseParams parses ".param .u64 a, .param .align 8 .b8 b[16]" (without parentheses).
func parseParams(s string) ([]Param, error) {
	var ps []Param
	for _, p := range splitTop(s, ',') {
		f := strings.Fields(p)
		if len(f) < 3 || f[0] != ".param" {
			return nil, fmt.Errorf("bad parameter %q", p)
		}
		name := f[len(f)-1]
		typ := strings.TrimPrefix(f[len(f)-2], ".")
		t, ok := parseType(typ)
		if !ok {
			return nil, fmt.Errorf("bad parameter type in %q", p)
		}
		size := (t.bits + 7) / 8
		if k := strings.IndexByte(name, '['); k >= 0 {
			n, err := strconv.Atoi(strings.TrimSuffix(name[k+1:], "]"))
			if err != nil {
				return nil, fmt.Errorf("bad parameter %q", p)
			}
			size, name = n*size, name[:k]
		}
		ps = append(ps, Param{Name: name, Type: typ, Size: size})
	}
	return ps, nil
}

// splitTop splits s at sep outside brackets, braces and parentheses.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{', '[', '(':
			depth++
		case '}', ']', ')':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

func parseHeader(h string) (*Func, error) {
	f := &Func{regIdx: map[string]int{}, labels: map[string]int{}, paramIdx: map[string]int{}, shared: map[string]int{}}
	rest := h
	switch {
	case strings.Contains(h, ".entry"):
		f.Entry = true
		rest = h[strings.Index(h, ".entry")+len(".entry"):]
	case strings.Contains(h, ".func"):
		rest = h[strings.Index(h, ".func")+len(".func"):]
	default:
		return nil, fmt.Errorf("bad function header %q", h)
	}
	rest = strings.TrimSpace(rest)
	if !f.Entry && strings.HasPrefix(rest, "(") {
		end := strings.IndexByte(rest, ')')
		rets, err := parseParams(rest[1:end])
		if err != nil {
			return nil, err
		}
		f.Rets = rets
		rest = strings.TrimSpace(rest[end+1:])
	}
	open := strings.IndexByte(rest, '(')
	if open < 0 {
		f.Name = strings.Fields(rest)[0]
		return f, nil
	}
	f.Name = strings.TrimSpace(rest[:open])
	end := strings.LastIndexByte(rest, ')')
	params, err := parseParams(rest[open+1 : end])
	if err != nil {
		return nil, err
	}
	f.Params = params
	for i, p := range params {
		f.paramIdx[p.Name] = i
	}
	return f, nil
}

// parseBody reads a function body from toks[i] to its closing brace and returns the
// index of that brace. Instructions are compiled after the declarations are read.
func (f *Func) parseBody(toks []token, i int) (int, error) {
	depth := 1
	var stmts []token
	for ; i < len(toks); i++ {
		tk := toks[i]
		switch tk.kind {
		case tOpen:
			depth++
		case tClose:
			depth--
			if depth == 0 {
				for _, s := range stmts {
					in, err := f.parseInst(s.text)
					if err != nil {
						return 0, fmt.Errorf("line %d: %q: %v", s.line, s.text, err)
					}
					f.prog = append(f.prog, in)
				}
				return i, nil
			}
		case tLabel:
			f.labels[tk.text] = len(stmts)
		case tStmt:
			s := tk.text
			var err error
			switch {
			case s == "":
			case strings.HasPrefix(s, ".reg"):
				err = f.declRegs(s)
			case strings.HasPrefix(s, ".param"):
				// a call scope's parameter: st.param/ld.param create it
			case strings.HasPrefix(s, ".shared"):
				if !f.Entry {
					err = fmt.Errorf("shared memory declared in device function %s", f.Name)
				} else {
					err = parseShared(s, f.shared, &f.smem, nil)
				}
			case strings.HasPrefix(s, ".maxntid"), strings.HasPrefix(s, ".minnctapersm"), strings.HasPrefix(s, ".reqntid"),
				strings.HasPrefix(s, ".pragma"), strings.HasPrefix(s, ".maxnreg"):
			case strings.HasPrefix(s, "."):
				err = fmt.Errorf("unsupported directive %q", s)
			default:
				stmts = append(stmts, tk)
			}
			if err != nil {
				return 0, fmt.Errorf("line %d: %v", tk.line, err)
			}
		default:
			return 0, fmt.Errorf("line %d: unexpected %q", tk.line, tk.text)
		}
	}
	return 0, fmt.Errorf("missing closing brace")
}

// declRegs handles ".reg .b32 %r<10>;" and ".reg .f32 %f1, %f2;".
func (f *Func) declRegs(s string) error {
	fs := strings.Fields(s)
	if len(fs) < 3 {
		return fmt.Errorf("bad register declaration %q", s)
	}
	t, ok := parseType(strings.TrimPrefix(fs[1], "."))
	if !ok {
		return fmt.Errorf("bad register type in %q", s)
	}
	for _, d := range splitTop(strings.Join(fs[2:], " "), ',') {
		if lt := strings.IndexByte(d, '<'); lt >= 0 {
			n, err := strconv.Atoi(strings.TrimSuffix(d[lt+1:], ">"))
			if err != nil {
				return fmt.Errorf("bad register declaration %q", s)
			}
			for k := 0; k < n; k++ {
				f.addReg(d[:lt]+strconv.Itoa(k), t.bits)
			}
		} else {
			f.addReg(d, t.bits)
		}
	}
	return nil
}

func (f *Func) addReg(name string, width int) {
	f.regIdx[name] = len(f.regWidth)
	f.regWidth = append(f.regWidth, width)
}

// varDecl reads ".global .align 4 .b32 name[8]" (linkage words skipped): the element
// type, alignment (at least the element size), element count (0 for "name[]") and name.
func varDecl(decl string) (t ptype, align, count int, name string, err error) {
	fs := strings.Fields(decl)
	for i := 1; i < len(fs); i++ {
		switch {
		case fs[i] == ".align" && i+1 < len(fs):
			align, _ = strconv.Atoi(fs[i+1])
			i++
		case fs[i] == ".visible" || fs[i] == ".extern" || fs[i] == ".weak" || fs[i] == ".global" ||
			fs[i] == ".const" || fs[i] == ".shared":
		case strings.HasPrefix(fs[i], "."):
			tt, ok := parseType(fs[i][1:])
			if !ok {
				return t, 0, 0, "", fmt.Errorf("bad variable declaration %q", decl)
			}
			t = tt
		default:
			name = fs[i]
		}
	}
	count = 1
	if k := strings.IndexByte(name, '['); k >= 0 {
		count = 0
		if s := strings.TrimSuffix(name[k+1:], "]"); s != "" {
			if count, err = strconv.Atoi(s); err != nil {
				return t, 0, 0, "", fmt.Errorf("bad variable declaration %q", decl)
			}
		}
		name = name[:k]
	}
	if t.bits < 8 || name == "" {
		return t, 0, 0, "", fmt.Errorf("bad variable declaration %q", decl)
	}
	return t, max(align, t.bits/8), count, name, nil
}

// parseShared lays out a .shared variable at the next offset of *size, or records an
// .extern .shared array (the dynamic shared memory) in extern.
func parseShared(s string, offs map[string]int, size *int, extern map[string]bool) error {
	t, align, count, name, err := varDecl(s)
	if err != nil {
		return err
	}
	if strings.Contains(s, ".extern") {
		if extern == nil || count != 0 {
			return fmt.Errorf("unsupported shared declaration %q", s)
		}
		extern[name] = true
		return nil
	}
	*size = (*size + align - 1) / align * align
	offs[name] = *size
	*size += count * t.bits / 8
	return nil
}

// parseVar reads a module-scope variable: ".global .align 4 .b32 name[8] = {1, 2, ...}".
func (m *Module) parseVar(s string) error {
	decl, init, _ := strings.Cut(s, "=")
	t, align, count, name, err := varDecl(decl)
	if err != nil {
		return err
	}
	size := t.bits / 8
	m.gsize = (m.gsize + uint64(align) - 1) / uint64(align) * uint64(align)
	off := m.gsize
	m.syms[name] = m.gbase + off
	m.gsize += uint64(count * size)
	m.gdata = append(m.gdata, make([]byte, int(m.gsize)-len(m.gdata))...)
	if init = strings.TrimSpace(init); init != "" {
		for i, v := range splitTop(strings.Trim(init, "{} "), ',') {
			x, err := parseImm(v)
			if err != nil || i >= count {
				return fmt.Errorf("variable %s: bad initializer %q", name, v)
			}
			putLE(m.gdata[int(off)+i*size:int(off)+(i+1)*size], x)
		}
	}
	return nil
}

// parseImm parses an immediate: decimal, hex (0x), 0fXXXXXXXX (float32 bits) or
// 0dXXXXXXXXXXXXXXXX (float64 bits).
func parseImm(s string) (uint64, error) {
	switch {
	case len(s) == 10 && (strings.HasPrefix(s, "0f") || strings.HasPrefix(s, "0F")):
		return strconv.ParseUint(s[2:], 16, 32)
	case len(s) == 18 && (strings.HasPrefix(s, "0d") || strings.HasPrefix(s, "0D")):
		return strconv.ParseUint(s[2:], 16, 64)
	}
	s = strings.TrimSuffix(s, "U")
	if v, err := strconv.ParseUint(s, 0, 64); err == nil {
		return v, nil
	}
	v, err := strconv.ParseInt(s, 0, 64)
	return uint64(v), err
}

// ptype is a PTX fundamental type.
type ptype struct {
	bits int
	kind byte // 'b', 'u', 's', 'f', 'p'
	bf16 bool
}

func parseType(s string) (ptype, bool) {
	switch s {
	case "pred":
		return ptype{1, 'p', false}, true
	case "bf16":
		return ptype{16, 'f', true}, true
	case "f16":
		return ptype{16, 'f', false}, true
	}
	if len(s) < 2 {
		return ptype{}, false
	}
	k := s[0]
	if k != 'b' && k != 'u' && k != 's' && k != 'f' {
		return ptype{}, false
	}
	n, err := strconv.Atoi(s[1:])
	if err != nil {
		return ptype{}, false
	}
	switch n {
	case 8, 16, 32, 64:
	default:
		return ptype{}, false
	}
	if k == 'f' && n < 32 {
		return ptype{}, false
	}
	return ptype{n, k, false}, true
}

func (t ptype) format() format {
	switch {
	case t.bf16:
		return fmtBF16
	case t.bits == 16:
		return fmtF16
	case t.bits == 32:
		return fmtF32
	}
	return fmtF64
}

type okind uint8

const (
	oReg okind = iota
	oNot       // !%p: a negated predicate
	oImm
	oVec // {%r1, %r2}; also d|p (two destinations)
	oMem // [base+off]
	oSpecial
	oSym  // a label, function or parameter name
	oList // (a, b) of a call
	oDyn  // the address of the dynamic shared memory
)

// opnd is an operand, kept small (the run loop reads operands all the time).
type opnd struct {
	kind okind
	dyn  bool // oMem: based at the dynamic shared memory
	sp   special
	reg  int32  // oReg; oMem with a register base (-1 otherwise)
	imm  uint64 // oImm; oMem with a variable's address as its base; oReg: the width's mask
	off  int64
	*opx
}

// opx is the rest of an operand.
type opx struct {
	vec  []int    // oVec
	name string   // oSym; oMem with a parameter as its base
	list []string // oList
}

var noX = &opx{}

// symbol resolves a variable name to its address (shared: its offset).
func (f *Func) symbol(name string) (opnd, bool) {
	if off, ok := f.shared[name]; ok {
		return opnd{kind: oImm, imm: uint64(off)}, true
	}
	m := f.mod
	if off, ok := m.shared[name]; ok {
		return opnd{kind: oImm, imm: uint64(off)}, true
	}
	if a, ok := m.syms[name]; ok {
		return opnd{kind: oImm, imm: a}, true
	}
	if m.extern[name] {
		return opnd{kind: oDyn}, true
	}
	return opnd{}, false
}

func (f *Func) parseOperand(s string) (opnd, error) {
	o, err := f.operand(s)
	if o.opx == nil {
		o.opx = noX
	}
	return o, err
}

func (f *Func) operand(s string) (opnd, error) {
	reg := func(r string) (int, error) {
		i, ok := f.regIdx[r]
		if !ok {
			return 0, fmt.Errorf("unknown register %q", r)
		}
		return i, nil
	}
	switch {
	case strings.HasPrefix(s, "{") || strings.Contains(s, "|"):
		o := opnd{kind: oVec, opx: &opx{}}
		rs := strings.Split(s, "|")
		if rs[0][0] == '{' {
			rs = splitTop(strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}"), ',')
		}
		for _, r := range rs {
			i, err := reg(strings.TrimSpace(r))
			if err != nil {
				return o, err
			}
			o.vec = append(o.vec, i)
		}
		return o, nil
	case strings.HasPrefix(s, "("):
		return opnd{kind: oList, opx: &opx{list: splitTop(strings.TrimSuffix(strings.TrimPrefix(s, "("), ")"), ',')}}, nil
	case strings.HasPrefix(s, "["):
		in := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
		o := opnd{kind: oMem, reg: -1}
		if k := strings.IndexAny(in, "+-"); k > 0 {
			off, err := strconv.ParseInt(strings.ReplaceAll(strings.ReplaceAll(in[k:], " ", ""), "+", ""), 0, 64)
			if err != nil {
				return o, err
			}
			o.off = off
			in = strings.TrimSpace(in[:k])
		}
		if r, ok := f.regIdx[in]; ok {
			o.reg = int32(r)
		} else if v, ok := f.symbol(in); ok {
			o.imm, o.dyn = v.imm, v.kind == oDyn
		} else if v, err := parseImm(in); err == nil {
			o.imm = v
		} else {
			o.opx = &opx{name: in}
		}
		return o, nil
	case strings.HasPrefix(s, "!%"):
		i, err := reg(s[1:])
		if err != nil {
			return opnd{}, err
		}
		return opnd{kind: oNot, reg: int32(i)}, nil
	case strings.HasPrefix(s, "%"):
		if i, ok := f.regIdx[s]; ok {
			return opnd{kind: oReg, reg: int32(i), imm: mask(^uint64(0), f.regWidth[i])}, nil
		}
		if sp, ok := specials[s]; ok {
			return opnd{kind: oSpecial, sp: sp}, nil
		}
		return opnd{}, fmt.Errorf("unknown register %q", s)
	case s != "" && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')):
		v, err := parseImm(s)
		return opnd{kind: oImm, imm: v}, err
	case isIdent(s):
		if v, ok := f.symbol(s); ok {
			return v, nil
		}
		return opnd{kind: oSym, opx: &opx{name: s}}, nil
	}
	return opnd{}, fmt.Errorf("bad operand %q", s)
}

func (f *Func) parseInst(s string) (*inst, error) {
	in := &inst{text: s, guard: -1}
	if strings.HasPrefix(s, "@") {
		sp := strings.IndexByte(s, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("bad guard")
		}
		g := s[1:sp]
		if strings.HasPrefix(g, "!") {
			in.gneg = true
			g = g[1:]
		}
		r, ok := f.regIdx[g]
		if !ok {
			return nil, fmt.Errorf("unknown guard %q", g)
		}
		in.guard = int32(r)
		s = strings.TrimSpace(s[sp+1:])
	}
	op, rest, _ := strings.Cut(s, " ")
	in.op = op
	in.parts = strings.Split(op, ".")
	for _, a := range splitTop(rest, ',') {
		o, err := f.parseOperand(a)
		if err != nil {
			return nil, err
		}
		in.args = append(in.args, o)
	}
	ex, err := f.compile(in)
	if err != nil {
		return nil, err
	}
	in.exec = ex
	return in, nil
}
