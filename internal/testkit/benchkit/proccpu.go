package benchkit

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcessCPU returns the CPU process pid has used so far (user + system),
// from /proc/pid/stat, in clock ticks of 10ms (USER_HZ 100): a run of a
// second or more of CPU reads it to 1%. An error means the process is gone
// or the file is not /proc's.
func ProcessCPU(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// utime and stime are fields 14 and 15; the command name before them
	// is in parentheses and may hold spaces.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command name, want 13 or more", pid, len(f))
	}
	var cpu time.Duration
	for _, v := range f[11:13] {
		ticks, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		cpu += time.Duration(ticks) * 10 * time.Millisecond
	}
	return cpu, nil
}
