package main

import "time"

// now is this process's clock: the wall clock plus -clock-skew. A Go
// program reads the clock through the vDSO, not libc, so libfaketime's
// LD_PRELOAD (Debian's faketime) cannot skew lootd; service mode's skewed
// instances pass -clock-skew instead.
//
// What reads it: player token expiry and -dev's in-memory store. With -db
// every deadline, lease and claim time is the database's clock (the
// backend's now), and the lock's ttl is Redis's, so a skewed lootd on a
// shared store decides nothing by its own clock but its tokens.
func (c config) now() time.Time { return time.Now().Add(c.clockSkew) }
