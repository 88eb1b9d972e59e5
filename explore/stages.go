package explore

import (
	"fmt"

	"github.com/mgtrace/mgtrace/mgbuild"
)

// runStages runs the stages after the graph, each failure a note.
func (s *Session) runStages(g *mgbuild.Graph) {
	s.crashStage(g)
	if s.opt.Spec != "" && s.wants("locate") {
		s.setStage("locate")
		if err := s.locateStage(g); err != nil {
			s.note("locate: %v", err)
		}
	}
	if s.wants("bugs") {
		s.setStage("bugs")
		if err := s.bugsStage(g); err != nil {
			s.note("bugs: %v", err)
		}
	}
	if s.wants("slice") && s.crashPC() != 0 {
		s.setStage("slice")
		if err := s.sliceStage(g); err != nil {
			s.note("slice: %v", err)
		}
	}
}

// crashStage records the signal that ended the run.
func (s *Session) crashStage(g *mgbuild.Graph) {
	s.mu.Lock()
	c := s.crash
	s.mu.Unlock()
	if c == nil {
		return
	}
	t := g.AtSeq(c.seq)
	cm := &CrashMark{At: Moment{TS: uint32(t), Seq: c.seq, Label: "crash"}, Signal: signalName(c.signal), Where: s.stmtValue(c.pc)}
	if c.addr != 0 || c.signal == 11 || c.signal == 7 {
		cm.Addr = fmt.Sprintf("%#x", c.addr)
	}
	s.stMu.Lock()
	s.findings.Crash = cm
	s.stMu.Unlock()
}

func (s *Session) locateStage(g *mgbuild.Graph) error { return nil }
func (s *Session) bugsStage(g *mgbuild.Graph) error   { return nil }
func (s *Session) sliceStage(g *mgbuild.Graph) error  { return nil }
