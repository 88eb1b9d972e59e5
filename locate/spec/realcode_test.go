package spec

import "testing"

// The language for real code (issue 14, item 7): connections over
// chosen fields, count and sum, % & ~, and array slots as edges.

// realCodeExample uses every form for real code (also a fuzz seed).
const realCodeExample = `
CONST LEFT = 3;
CONST RIGHT = 4;
CONST PARENT = 5;
rbnode FIELD 5 EDGE 3;
ARRAY bucket OF 8 EDGE;
bucket ALLOC table_new;
dict FIELD 4 EDGE 2;
entry FIELD 2 EDGE 1;
rbnode.BH DEFAULT 0;
rbnode X; (X[LEFT]) == X => X.BH = 0 || X.BH = (X[LEFT]).BH + X[1];
count(rbnode X : X[PARENT] == NULL) <= 1;
rbnode X; rbnode Y; X ~>[LEFT,RIGHT] Y => Y !~>[LEFT, RIGHT] X;
rbnode X; rbnode Y; X ->[LEFT] Y and Y != X => Y ->[PARENT] X;
dict D; D[1] == count(entry E : (D[3]) ~> E);
dict D; D[2] == sum(entry E : (D[3]) ~> E, E[1] & 1) + count(entry E) % 2 - ~0;
bucket B; entry E; B ->[1] E => E[1] % 8 == 0;
`

// aggShape is shape with aggregates and chosen slots shown.
func aggShape(e Expr) string {
	switch e := e.(type) {
	case *Aggregate:
		s := e.Kind.String() + "(" + e.Var.Type + " " + e.Var.Name
		if e.Cond != nil {
			s += " : " + aggShape(e.Cond)
		}
		if e.Value != nil {
			s += ", " + aggShape(e.Value)
		}
		return s + ")"
	case *Binary:
		if e.Via != nil {
			return "Binary(" + e.Op.String() + viaString(e.Via) + ", " + aggShape(e.L) + ", " + aggShape(e.R) + ")"
		}
		return "Binary(" + e.Op.String() + ", " + aggShape(e.L) + ", " + aggShape(e.R) + ")"
	case *Unary:
		return "Unary(" + e.Op.String() + ", " + aggShape(e.X) + ")"
	}
	return shape(e)
}

func TestParseRealCodeExpressions(t *testing.T) {
	tests := []struct{ src, shape string }{
		// % and & bind like * and /; ~ like unary minus.
		{"X[1] & 7 == 3", "Binary(==, Binary(&, Field(X, Int(1)), Int(7)), Int(3))"},
		{"X[1] % 8 + 1 == 3", "Binary(==, Binary(+, Binary(%, Field(X, Int(1)), Int(8)), Int(1)), Int(3))"},
		{"X[1] * 2 % 3 & 1 == 0", "Binary(==, Binary(&, Binary(%, Binary(*, Field(X, Int(1)), Int(2)), Int(3)), Int(1)), Int(0))"},
		{"~X[1] == -1", "Binary(==, Unary(~, Field(X, Int(1))), Int(-1))"},
		{"~~X[1] == 0", "Binary(==, Unary(~, Unary(~, Field(X, Int(1)))), Int(0))"},
		{"-~X[1] == 1", "Binary(==, Unary(-, Unary(~, Field(X, Int(1)))), Int(1))"},
		// ~> is still the path operator; ~ > is a complement then >.
		{"X ~> Y", "Binary(~>, X, Y)"},
		{"X[1] ~ > 0", "error"},
		// Connections over chosen fields.
		{"X ->[2] Y", "Binary(->[2], X, Y)"},
		{"X !->[2] Y", "Binary(!->[2], X, Y)"},
		{"X ~>[2,3] Y", "Binary(~>[2,3], X, Y)"},
		{"X !~>[2, 3] Y", "Binary(!~>[2,3], X, Y)"},
		{"X ->>[2] Y", "Binary(~>[2], X, Y)"},
		{"X →[BLACK] Y", "Binary(->[1], X, Y)"},
		{"X ~>[2] Y => Y !~>[2] X", ""},
		{"(X[2]) ->[2] Y", "Binary(->[2], Deref(X, Int(2)), Y)"},
		// Aggregates.
		{"count(node N) == 3", "Binary(==, count(node N), Int(3))"},
		{"count(node N : N[1] > X[1]) <= 1", "Binary(<=, count(node N : Binary(>, Field(N, Int(1)), Field(X, Int(1)))), Int(1))"},
		{"sum(node N, N[1]) == X[1]", "Binary(==, sum(node N, Field(N, Int(1))), Field(X, Int(1)))"},
		{"sum(node N : X ~>[2] N, N[1] % 2) == 0", "Binary(==, sum(node N : Binary(~>[2], X, N), Binary(%, Field(N, Int(1)), Int(2))), Int(0))"},
		{"X[1] == count(node N : (N[1] > 0) ? true : false) + 1", "Binary(==, Field(X, Int(1)), Binary(+, count(node N : Cond(Binary(>, Field(N, Int(1)), Int(0)), Bool(true), Bool(false))), Int(1)))"},
		// count and sum are names elsewhere.
		{"X[count] == sum", "Binary(==, Field(X, count), sum)"},
	}
	for _, tt := range tests {
		src := "CONST BLACK = 1;\nnode X; node Y; " + tt.src + ";\n"
		s, err := Parse("e.spec", []byte(src))
		if tt.shape == "error" {
			if err == nil {
				t.Errorf("Parse(%q): no error", tt.src)
			}
			continue
		}
		if tt.shape == "" {
			if err != nil {
				t.Errorf("Parse(%q): %v", tt.src, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.src, err)
			continue
		}
		if got := aggShape(s.Constraints[0].Body); got != tt.shape {
			t.Errorf("Parse(%q):\n got  %s\n want %s", tt.src, got, tt.shape)
		}
		// String round-trips.
		again, err := Parse("e.spec", []byte("CONST BLACK = 1;\nnode X; node Y; "+s.Constraints[0].Body.String()+";\n"))
		if err != nil {
			t.Errorf("Parse(String(%q) = %q): %v", tt.src, s.Constraints[0].Body, err)
		} else if got := aggShape(again.Constraints[0].Body); got != tt.shape {
			t.Errorf("String round trip of %q: %s", tt.src, got)
		}
	}
}

func TestParseRealCodeStatements(t *testing.T) {
	src := `
ARRAY bucket OF 8 EDGE;
bucket ALLOC table_new;
ARRAY plain OF 8;
plain ALLOC f;
rbnode FIELD 5 EDGE 3;
// a global constraint: the unique root in O(N)
count(rbnode X : X[4] == NULL) <= 1;
rbnode X; rbnode Y; X ~>[3,4] Y => Y !~>[3,4] X;
bucket B; for I in 1 to 8, (B[I]) != NULL => (B[I])[1] & 7 == I - 1;
`
	s, err := Parse("r.spec", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Types[0]; !d.Array || d.SlotSize != 8 || !d.EdgeSlots || d.String() != "ARRAY bucket OF 8 EDGE;" {
		t.Errorf("bucket: %+v %s", d, d)
	}
	if d := s.Types[1]; d.EdgeSlots {
		t.Errorf("plain has edge slots")
	}
	if len(s.Constraints) != 3 || len(s.Constraints[0].Vars) != 0 {
		t.Fatalf("constraints %+v", s.Constraints)
	}
	if got := s.Constraints[0].Text; got != "count(rbnode X : X[4] == NULL) <= 1;" {
		t.Errorf("text %q", got)
	}
	if err := Check(s, nil); err != nil {
		t.Errorf("Check: %v", err)
	}
	// count and sum stay ordinary names: a type, a variable, a constant.
	s, err = Parse("n.spec", []byte("count FIELD 2 EDGE 1;\nCONST sum = 2;\ncount count; count[sum] != NULL => (count[sum]) -> count;\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(s, nil); err != nil {
		t.Errorf("Check: %v", err)
	}
}

func TestCheckRealCodeExample(t *testing.T) {
	s, err := Parse("x.spec", []byte(realCodeExample))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(s, nil); err != nil {
		t.Fatal(err)
	}
	again, err := Parse("x.spec", []byte(s.String()))
	if err != nil {
		t.Fatalf("printed spec: %v\n%s", err, s)
	}
	if again.String() != s.String() {
		t.Errorf("round trip:\n%s\nwant\n%s", again, s)
	}
}

func TestCheckRealCodeConstValues(t *testing.T) {
	for src, want := range map[string]int64{
		"7 % 3": 1, "-7 % 3": -1, "7 % -3": 1, "6 & 3": 2, "~0": -1, "~5 & 7": 2, "13 & 7 % 4": 1,
	} {
		s, err := Parse("c.spec", []byte("node FIELD 2 EDGE 1;\nnode X; X[1] == "+src+";\n"))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := constValue(s.Constraints[0].Body.(*Binary).R, 0)
		if !ok || got != want {
			t.Errorf("%s = %d, %v; want %d", src, got, ok, want)
		}
	}
	s, _ := Parse("c.spec", []byte("node FIELD 2 EDGE 1;\nnode X; X[1] == 1 % 0;\n"))
	if _, ok := constValue(s.Constraints[0].Body.(*Binary).R, 0); ok {
		t.Errorf("1 %% 0 has a value")
	}
}
