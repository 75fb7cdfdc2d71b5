package engine

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Shard is part I of N (0 <= I < N) of a campaign's cells: a matrix or a
// TestDesign run in N processes, each given its own I, runs every cell
// exactly once between them, and MergeShards puts their matrices back
// together into the Matrix one process would have made. The zero Shard is
// the whole campaign.
//
// The cells are dealt out in column order (family by family, each
// family's designs in row order): cell (design i of R, family j) is shard
// (j*R + i) mod N's. Every shard gets the same number of cells, to one, and
// a family's cells spread over the shards (over min(R, N) of them), so a
// costly family (long-history, small-scope) is not one shard's alone, as
// it would be were cells dealt in row order with as many families as a
// multiple of N.
// Cells, not schedule ranges, are the unit: a cell's counterexamples are
// shrunk toward what all its runs failed, so a cell split over processes
// would shrink differently from one run whole, and the merge would not be
// byte for byte the single run's.
type Shard struct {
	I, N int
}

// ParseShard reads "i/n" (0 <= i < n; e.g. a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX and its completions).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want i/n with 0 <= i < n, as 0/4 .. 3/4", s)
	}
	return Shard{I: i, N: n}, nil
}

func (s Shard) String() string {
	if s.N <= 1 {
		return "0/1"
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Has reports whether the cell of design row (of rows) and family column
// is this shard's.
func (s Shard) Has(row, column, rows int) bool {
	return s.N <= 1 || (column*rows+row)%s.N == s.I
}

// Ran reports whether c was run (a shard leaves other shards' cells zero).
func (c Cell[S, X]) Ran() bool { return c.Design != "" }

// MergeShards is the Matrix of a campaign from its shards' matrices (in
// any order): every cell from the one shard that ran it. It fails if the
// shards are of different campaigns (N, Seed, Families or the designs and
// their declarations differ), if two ran the same cell, or if a cell was
// run by none (a shard is missing), naming the cell.
func MergeShards[S, X any](shards []Matrix[S, X]) (Matrix[S, X], error) {
	if len(shards) == 0 {
		return Matrix[S, X]{}, fmt.Errorf("merge: no shards")
	}
	first := shards[0]
	m := Matrix[S, X]{N: first.N, Seed: first.Seed, Families: slices.Clone(first.Families)}
	for _, r := range first.Rows {
		m.Rows = append(m.Rows, Row[S, X]{Design: r.Design, Declaration: r.Declaration, Cells: make([]Cell[S, X], len(first.Families))})
	}
	for k, sh := range shards {
		switch {
		case sh.N != m.N, sh.Seed != m.Seed, !slices.Equal(sh.Families, m.Families), len(sh.Rows) != len(m.Rows):
			return Matrix[S, X]{}, fmt.Errorf("merge: shard %d is of another campaign (N %d seed %d, %d families, %d designs; the first: N %d seed %d, %d families, %d designs)",
				k+1, sh.N, sh.Seed, len(sh.Families), len(sh.Rows), m.N, m.Seed, len(m.Families), len(m.Rows))
		}
		for i, r := range sh.Rows {
			if r.Design != m.Rows[i].Design || !reflect.DeepEqual(r.Declaration, m.Rows[i].Declaration) || len(r.Cells) != len(m.Families) {
				return Matrix[S, X]{}, fmt.Errorf("merge: shard %d's row %d is %s, the first shard's %s (or their declarations differ): shards of another campaign", k+1, i+1, r.Design, m.Rows[i].Design)
			}
			for j, c := range r.Cells {
				if !c.Ran() {
					continue
				}
				if m.Rows[i].Cells[j].Ran() {
					return Matrix[S, X]{}, fmt.Errorf("merge: %s under %s was run by two shards", r.Design, m.Families[j])
				}
				m.Rows[i].Cells[j] = c
			}
		}
	}
	var missing []string
	for _, r := range m.Rows {
		for j, c := range r.Cells {
			if !c.Ran() {
				missing = append(missing, r.Design+" under "+string(m.Families[j]))
			}
		}
	}
	if len(missing) > 0 {
		return Matrix[S, X]{}, fmt.Errorf("merge: %d cells were run by no shard (a shard is missing), first %s", len(missing), missing[0])
	}
	return m, nil
}
