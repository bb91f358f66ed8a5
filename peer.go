package gpu

import "fmt"

// Peer access between devices of one backend.
//
// Copies between two devices need nothing from the caller: Stream.CopyDtoD and
// Buffer.CopyFrom accept buffers of two devices of the same backend (a peer copy: CUDA
// Driver API: cuMemcpyPeerAsync), and the tracking orders a buffer of one device used
// on another device's stream like any other use (cross-device event waits). Peer access
// matters for two things: a kernel on one device that reads or writes a buffer of
// another (Stream.Launch and the array operations refuse it unless the kernel's device
// has enabled access to the buffer's: on CUDA the kernel would fault), and the speed of
// peer copies (with it, they go directly over NVLink or PCIe; without it, the driver
// stages them through host memory).

// CanAccessPeer reports whether kernels running on d can address memory of peer once
// EnablePeerAccess(peer) has been called on d (CUDA Driver API: cuDeviceCanAccessPeer).
// A device can always access itself; devices of different backends never can. On the
// CPU backend every CPU device can access every other one.
func (d *Device) CanAccessPeer(peer *Device) (bool, error) {
	if d.isNil() {
		return false, errNilDevice
	}
	if peer.isNil() {
		return false, fmt.Errorf("gpu: CanAccessPeer(nil): %w", ErrInvalidValue)
	}
	if peer == d {
		return true, nil
	}
	if peer.info.Backend != d.info.Backend {
		return false, nil
	}
	return d.be.CanAccessPeer(peer.be)
}

// EnablePeerAccess lets kernels running on d address memory of peer (CUDA Driver API:
// cuCtxEnablePeerAccess on d's primary context with peer's). It enables one direction
// only: for kernels on peer to address d's memory, call peer.EnablePeerAccess(d) as
// well. Enabling access that is already enabled, or access of a device to itself, is
// not an error. It returns an error wrapping ErrInvalidValue for a device of another
// backend, and the driver's error where the devices cannot access each other (check
// CanAccessPeer first). Access stays enabled for the life of the process. On the CPU
// backend it only records the access, which launches check as on CUDA.
//
// The access covers every buffer of peer, those of its stream-ordered pool included (on
// CUDA that takes cuMemPoolSetAccess on peer's pool besides cuCtxEnablePeerAccess,
// which alone does not reach pool allocations); the conformance test PeerKernel checks
// it.
func (d *Device) EnablePeerAccess(peer *Device) error {
	if d.isNil() {
		return errNilDevice
	}
	if peer.isNil() {
		return fmt.Errorf("gpu: EnablePeerAccess(nil): %w", ErrInvalidValue)
	}
	if peer == d {
		return nil
	}
	if peer.info.Backend != d.info.Backend {
		return fmt.Errorf("gpu: peer access from %v to %v, a device of another backend: %w", d, peer, ErrInvalidValue)
	}
	if err := d.be.EnablePeerAccess(peer.be); err != nil {
		return fmt.Errorf("gpu: enabling peer access from %v to %v: %w", d, peer, err)
	}
	d.peers.Store(peer, struct{}{})
	return nil
}

// checkPeers returns an error if a kernel on s would address device memory of another
// device without d.EnablePeerAccess(that device): on CUDA that kernel would fault, and
// the fault is sticky (the device's context is lost). The CPU backend keeps the same
// rule, so that code tested there does not fault on a GPU.
func (s *Stream) checkPeers(fn *Function, uses []use) error {
	for _, u := range uses {
		if o := u.a.dev; o != s.dev && u.a.kind == DeviceMem {
			if _, ok := s.dev.peers.Load(o); !ok {
				return fmt.Errorf("gpu: launch of %s on %v with a buffer of %v: peer access from %v to %v is not enabled (Device.EnablePeerAccess): %w",
					fn.Name(), s, o, s.dev, o, ErrInvalidValue)
			}
		}
	}
	return nil
}
