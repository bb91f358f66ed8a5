package cpu

import "syscall"

// physicalMemory returns the machine's physical memory in bytes (sysinfo(2)), or 1 TiB
// if the call fails.
func physicalMemory() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return 1 << 40
	}
	return int64(si.Totalram) * int64(si.Unit)
}
