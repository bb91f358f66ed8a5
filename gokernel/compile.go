package gokernel

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"github.com/go-gpu/gpu/ptx"
)

// kparam is a kernel parameter after the Thread.
type kparam struct {
	name  string
	obj   *types.Var
	t     types.Type // may hold the kernel's type parameters
	slice bool
}

// analyze checks the kernel's signature and finds what its code uses.
func (p *program) analyze() (params []kparam, coop, warp bool, err error) {
	sig := p.sig
	fail := func(pos token.Pos, format string, args ...any) (err error) {
		return p.errorf(pos, format, args...)
	}
	if sig.Results().Len() > 0 {
		return nil, false, false, fail(p.kdecl.Type.Results.Pos(), "a kernel returns nothing: it writes its results into slices")
	}
	if sig.Variadic() {
		return nil, false, false, fail(p.kdecl.Type.Params.Pos(), "a kernel is not variadic")
	}
	if sig.Params().Len() == 0 || !isThread(sig.Params().At(0).Type()) {
		return nil, false, false, fail(p.kdecl.Type.Params.Pos(), "a kernel's first parameter is its kern.Thread: func %s(t kern.Thread, ...)", p.kernel.Name())
	}
	for i := 1; i < sig.Params().Len(); i++ {
		v := sig.Params().At(i)
		t := v.Type()
		kp := kparam{name: v.Name(), obj: v, t: t}
		et := t
		if e := sliceElem(t); e != nil {
			kp.slice, et = true, e
		}
		ok := false
		if tp, isTP := types.Unalias(et).(*types.TypeParam); isTP {
			_, ok = representative(tp).(*types.Basic)
		} else if ti, isScalar := scalarInfo(et); isScalar {
			ok = !(kp.slice && ti.bool)
		}
		if !ok {
			return nil, false, false, fail(v.Pos(), "a kernel's parameters are numbers, bools and slices of numbers, not %s", t)
		}
		if kp.name == "" || kp.name == "_" {
			kp.name = fmt.Sprintf("p%d", i)
		}
		params = append(params, kp)
	}
	for _, fd := range p.reachable() {
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			fn, ok := p.info.Uses[id].(*types.Func)
			if !ok || !isKernPkg(fn) {
				return true
			}
			switch fn.Name() {
			case "Sync":
				coop = true
			case "SyncWarp", "Ballot", "All", "Any", "ShflXor", "ShflDown", "ShflUp", "Shfl":
				coop, warp = true, true
			}
			return true
		})
	}
	return params, coop, warp, nil
}

// instance is one compiled instantiation of a kernel.
type instance struct {
	ptx         string
	entry       string
	params      []iparam
	sites       []site
	sharedBytes int
}

// iparam is an instantiated kernel parameter.
type iparam struct {
	kparam
	t           types.Type // instantiated
	ti          tinfo      // the scalar's, or the slice element's
	read, write bool       // a slice's
}

// compileHook, set by tests, sees every module compiled.
var compileHook func(entry, src string)

// compileOptions are what an instantiation is compiled for.
type compileOptions struct {
	major, minor int
	checks       bool
	subst        map[*types.TypeParam]types.Type
}

// compile compiles the kernel for the type arguments in o.subst.
func (p *program) compile(params []kparam, warp bool, o compileOptions) (inst *instance, err error) {
	g := &gen{p: p, checks: o.checks, sharedAt: map[string]string{}, sharedCall: map[int]token.Pos{}, cmps: map[*ast.BinaryExpr]cmpLins{}}
	g.initProver()
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bail)
			if !ok {
				panic(r)
			}
			inst, err = nil, b.err
		}
	}()
	g.m = ptx.NewModule(o.major, o.minor)
	entry := p.kernel.Name()
	var targs []string
	if tps := p.sig.TypeParams(); tps.Len() > 0 {
		for i := range tps.Len() {
			targs = append(targs, o.subst[tps.At(i)].String())
		}
		entry += "_" + strings.Join(targs, "_")
	}
	var pp []ptx.Param
	inst = &instance{entry: entry}
	for _, kp := range params {
		ip := iparam{kparam: kp, t: substitute(kp.t, o.subst)}
		if kp.slice {
			ip.ti, _ = scalarInfo(sliceElem(ip.t))
			pp = append(pp, ptx.P(kp.name+"_ptr", ptx.U64), ptx.P(kp.name+"_len", ptx.U64))
		} else {
			ip.ti, _ = scalarInfo(ip.t)
			pt := ip.ti.reg
			if pt == ptx.Pred {
				pt = ptx.U32
			}
			pp = append(pp, ptx.P(kp.name, pt))
		}
		inst.params = append(inst.params, ip)
	}
	pp = append(pp, ptx.P("fault_record", ptx.U64))
	g.recIndex = len(pp) - 1
	g.f = g.m.Kernel(entry, pp...)
	g.fr = &frame{fn: p.kernel, vars: map[types.Object]*variable{}, subst: o.subst}
	if warp {
		g.writeWarpLanes()
	}
	// The parameters.
	g.fr.vars[p.sig.Params().At(0)] = &variable{t: p.sig.Params().At(0).Type(), v: value{k: vThread}}
	k := 0
	oss := make([]*oset, len(params))
	for i, ip := range inst.params {
		if ip.slice {
			ptr := g.f.LdParam(k)
			gp := g.f.Reg(ptx.U64)
			g.f.CvtaTo(ptx.Global, gp, ptr)
			ln := g.f.LdParam(k + 1).As(ptx.S64)
			cp := g.f.Reg(ptx.S64)
			g.f.Mov(cp, ln)
			oss[i] = &oset{params: map[int]bool{i: true}}
			g.fr.vars[ip.obj] = &variable{t: ip.t, v: value{k: vSlice, t: ip.t, s: &sliceVal{
				ptr: gp, len: ln, cap: cp, len32: g.clamp32(ln), space: ptx.Global, os: oss[i], elem: sliceElem(ip.t),
			}}}
			k += 2
			continue
		}
		r := g.f.LdParam(k)
		if ip.ti.bool {
			b := g.f.Setp(ptx.Ne, r, ptx.Int(0))
			r = b
		}
		g.fr.vars[ip.obj] = &variable{t: ip.t, v: scalar(ip.t, r)}
		k++
	}
	g.block(p.kdecl.Body.List)
	g.f.Ret()
	g.writeCold()
	g.writeFailPath()
	if g.sharedBytes > 48<<10 {
		return nil, p.errorf(p.kdecl.Pos(), "the kernel's shared arrays take %d bytes, more than the 48 KiB a block has", g.sharedBytes)
	}
	// Which slices are read and written.
	for _, a := range g.accesses {
		for i := range a.os.find().params {
			inst.params[i].read = inst.params[i].read || a.read
			inst.params[i].write = inst.params[i].write || a.write
		}
	}
	inst.ptx = g.m.String()
	if compileHook != nil {
		compileHook(inst.entry, inst.ptx)
	}
	inst.sites = g.sites
	inst.sharedBytes = g.sharedBytes
	return inst, nil
}
