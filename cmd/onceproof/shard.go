package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/onceproof/onceproof/engine"
)

// shardFile is what `matrix -shard i/n -json FILE` writes and `merge`
// reads: the shard's cells (the others zero) and what the merged matrix's
// files must say of their origin, so the merge writes the single run's
// files byte for byte.
type shardFile struct {
	Subject string `json:"subject"`
	Shard   string `json:"shard"`
	// Flags are the matrix command's, without -shard and -json (a shard
	// has no -out): the origin an unsharded run's files name, with the
	// merge's -out put among them where the flag set orders it, and
	// whether it was the full default matrix, which merged into the
	// committed results names committedBy (fullMatrix).
	Flags  []commandFlag   `json:"flags"`
	Matrix json.RawMessage `json:"matrix"`
}

// runShard runs shard opt.Shard of the matrix and writes its cells as a
// shard file to -json. Its cells' verdicts are the merge's to report: the
// shard exits 0 unless it could not run.
func runShard[D engine.Design, S, X any](sub subject[D, S, X], opt engine.MatrixOptions[D], mr matrixRun) (int, error) {
	m, err := execute(sub.world, opt, mr)
	if err != nil {
		return 0, err
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return 0, err
	}
	f := shardFile{Subject: sub.name, Shard: opt.Shard.String(), Flags: commandFlags(mr.fs, mr.set, mr.sp), Matrix: raw}
	if err := writeJSON(mr, f); err != nil {
		return 0, err
	}
	ran := 0
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			if c.Ran() {
				ran++
			}
		}
	}
	fmt.Fprintf(mr.stdout, "shard %s: %d of %d cells (%d designs x %d families, %d schedules per cell) in %s; onceproof merge of every shard's file writes the matrix\n",
		f.Shard, ran, len(m.Rows)*len(m.Families), len(m.Rows), len(m.Families), m.N, mr.jsonOut)
	return exitOK, nil
}

// mergeCmd is `merge FILE...`: the shards' files of one matrix command put
// back together and written as that command, run whole, writes its files
// (matrix.md, matrix.html, counterexamples/), byte for byte, with its
// report and exit code.
func mergeCmd(args []string, regs registries, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	out := fs.String("out", "", "directory for matrix.md and counterexamples/ (default: as matrix would: results/ for the full default matrix merged at the module root, else a fresh private directory); only files an earlier run listed in DIR/"+manifestName+" are overwritten")
	jsonOut := fs.String("json", "", "also write the merged matrix as JSON (engine.Matrix) to this file, or to stdout for -")
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return 0, err
	}
	if len(pos) == 0 {
		return 0, badf("merge: no shard files (onceproof matrix -shard i/n -json FILE writes one per shard)")
	}
	var shards []shardFile
	for _, name := range pos {
		b, err := os.ReadFile(name)
		if err != nil {
			return 0, badf("merge: %v", err)
		}
		var f shardFile
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil || f.Subject == "" || len(f.Matrix) == 0 {
			return 0, badf("merge: %s is not a shard file of onceproof matrix -shard (%v)", name, err)
		}
		if len(shards) > 0 && (f.Subject != shards[0].Subject || !slices.Equal(f.Flags, shards[0].Flags)) {
			return 0, badf("merge: %s is a shard of %q (%s), %s of %q (%s): shards of two matrix commands",
				name, formatCommand(f.Flags), f.Subject, pos[0], formatCommand(shards[0].Flags), shards[0].Subject)
		}
		if slices.ContainsFunc(shards, func(g shardFile) bool { return g.Shard == f.Shard }) {
			return 0, badf("merge: shard %s is given twice (%s)", f.Shard, name)
		}
		shards = append(shards, f)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	mr := matrixRun{fs: fs, set: set, out: *out, jsonOut: *jsonOut, stdout: stdout, stderr: stderr, jsonW: stdout}
	if *jsonOut == "-" {
		mr.stdout = stderr
	}
	switch shards[0].Subject {
	case "settle":
		return merge(settleSubject(regs.settle), shards, mr)
	case "loot":
		return merge(lootSubject(regs.loot), shards, mr)
	}
	return 0, badf("merge: %s: subject %q (want settle or loot)", pos[0], shards[0].Subject)
}

// merge decodes sub's shards, merges them and writes the matrix.
func merge[D engine.Design, S, X any](sub subject[D, S, X], shards []shardFile, mr matrixRun) (int, error) {
	ms := make([]engine.Matrix[S, X], len(shards))
	for i, f := range shards {
		if err := json.Unmarshal(f.Matrix, &ms[i]); err != nil {
			return 0, badf("merge: shard %s: %v", f.Shard, err)
		}
	}
	m, err := engine.MergeShards(ms)
	if err != nil {
		return 0, badf("%v", err)
	}
	full := fullMatrix(func(name string) bool {
		return slices.ContainsFunc(shards[0].Flags, func(f commandFlag) bool { return f.Name == name })
	})
	out, label := mr.out, "-out "+mr.out
	if !mr.set["out"] {
		if out, err = defaultOut(sub.name, sub.results, full, nil); err != nil {
			return 0, err
		}
		label = out
	}
	od, err := openOut(out, label)
	if err != nil {
		return 0, err
	}
	defer od.Close()
	flags := shards[0].Flags
	if mr.set["out"] {
		flags = append(slices.Clone(flags), commandFlag{"out", out})
		slices.SortStableFunc(flags, func(a, b commandFlag) int { return strings.Compare(a.Name, b.Name) })
	}
	return writeMatrix(sub, m, od, out, byLine(out == sub.results && full, formatCommand(flags)), mr)
}
