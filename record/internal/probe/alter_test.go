package probe

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/schema"
)

// TestDecodeAlter decodes ALTER sites (record --switch, --suppress): an
// execution that was altered has an ALTER event before the instruction's
// own events and no STORE of a suppressed instruction; one that was not
// altered has no ALTER event. The ALTER_COUNT records come out as counts.
func TestDecodeAlter(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	// Superblock 1: a suppressed store's instruction (ALTER site, then its
	// STORE site) and a store of another instruction.
	s.sbDef(1, [][2]uint64{{0x1000, 4}, {0x1004, 3}},
		siteWord(siteAlter, alterSuppress, 0, 2, 0, 0, 0),
		siteWord(siteStore, 8, 0, 2, 0, 0, 0),
		siteWord(siteStore, 8, 0, 2, 1, 0, 0))
	// Superblock 2: a switched branch: ALTER site, then its exit.
	s.sbDef(2, [][2]uint64{{0x2000, 2}},
		siteWord(siteAlter, alterSwitch, 0, 2, 0, 0, 0),
		siteWord(siteExit, 0, 0, 0, 0, 0, 0))
	s.put(hdr(recSBExec, 0, 1), 0, 0, 0x5000, 7, 0x6000, 8) // not altered
	s.put(hdr(recSBExec, 0, 1), 2, 0, 0x5000, 7, 0x6000, 8) // instance 2 suppressed
	s.put(hdr(recSBExec, execExit, 2), 1, 0x3000)           // instance 1 switched, the exit taken
	s.put(hdr(recAlter, 3, 0), 0, 5, hdr(recAlter, 3, 0), 1, 1)
	c, d := decode(t, s)
	want := []schema.Event{
		{Kind: schema.KindBlock, Thread: 1, PC: 0x1000, Count: 2},
		{Kind: schema.KindStore, Thread: 1, PC: 0x1000, Addr: 0x5000, Size: 8, Value: 7},
		{Kind: schema.KindStore, Thread: 1, PC: 0x1004, Addr: 0x6000, Size: 8, Value: 8},
		{Kind: schema.KindBlock, Thread: 1, PC: 0x1000, Count: 2},
		{Kind: schema.KindAlter, Thread: 1, PC: 0x1000, Num: 2, Count: 2},
		{Kind: schema.KindStore, Thread: 1, PC: 0x1004, Addr: 0x6000, Size: 8, Value: 8},
		{Kind: schema.KindBlock, Thread: 1, PC: 0x2000, Count: 1},
		{Kind: schema.KindAlter, Thread: 1, PC: 0x2000, Num: 1, Count: 1, Addr: 0x3000},
	}
	if !reflect.DeepEqual(c.events, want) {
		t.Errorf("events:\n%+v\nwant\n%+v", c.events, want)
	}
	if got := d.AlterCounts(); !reflect.DeepEqual(got, map[uint64]uint64{0: 5, 1: 1}) {
		t.Errorf("AlterCounts = %v, want slot 0: 5, slot 1: 1", got)
	}
}

func TestDecodeAlterMalformed(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	s.sbDef(1, [][2]uint64{{0x1000, 4}}, siteWord(siteAlter, 3, 0, 2, 0, 0, 0))
	err := NewDecoder(bytes.NewReader(s.bytes()), &collect{}).Run()
	if err == nil || !strings.Contains(err.Error(), "alteration 3") {
		t.Errorf("an ALTER site with alteration 3: %v", err)
	}
	s = (&stream{}).hello().switchTo(1).put(hdr(recAlter, 2, 0), 0)
	err = NewDecoder(bytes.NewReader(s.bytes()), &collect{}).Run()
	if err == nil || !strings.Contains(err.Error(), "short alteration count") {
		t.Errorf("a short ALTER_COUNT record: %v", err)
	}
}
