package lin_test

import (
	"context"
	"fmt"
	"strconv"

	"github.com/mgtrace/mgtrace/lin"
)

// account is a model of one's own: a bank account with deposit(n),
// withdraw(n) -> bool (false when the balance is too low) and
// balance() -> n.
type account struct{}

type accountOp struct {
	name string
	n    int64
	out  lin.Value
	ok   bool // the output is known
}

func (account) Name() string    { return "account" }
func (account) Init() lin.State { return int64(0) }

func (account) Action(op *lin.Op) (lin.Action, error) {
	a := accountOp{name: op.Name, n: op.Input.I, out: op.Output, ok: op.Status == lin.OK}
	switch op.Name {
	case "deposit", "withdraw", "balance":
		return a, nil
	}
	return nil, fmt.Errorf("an account has no operation %q", op.Name)
}

func (account) Step(s lin.State, a lin.Action) (bool, lin.State) {
	bal, op := s.(int64), a.(accountOp)
	switch op.name {
	case "deposit":
		return true, bal + op.n
	case "withdraw":
		enough := bal >= op.n
		if op.ok && (op.out.I != 0) != enough {
			return false, s
		}
		if enough {
			return true, bal - op.n
		}
		return true, s
	}
	return !op.ok || op.out.I == bal, s
}

func (account) Equal(s, t lin.State) bool        { return s.(int64) == t.(int64) }
func (account) Hash(s lin.State) uint64          { return uint64(s.(int64)) }
func (account) DescribeState(s lin.State) string { return strconv.FormatInt(s.(int64), 10) }

// Two clients withdraw 70 from an account holding 100 at the same time,
// and both succeed: no order of the two gives that. The counterexample
// is the two withdrawals, starting from the balance the deposit before
// them leaves.
func Example_ownModel() {
	h := &lin.History{Ops: []lin.Op{
		{Client: 0, Name: "deposit", Input: lin.IntValue(100), Call: 0, Return: 1},
		{Client: 1, Name: "withdraw", Input: lin.IntValue(70), Output: lin.BoolValue(true), Call: 2, Return: 5},
		{Client: 2, Name: "withdraw", Input: lin.IntValue(70), Output: lin.BoolValue(true), Call: 3, Return: 4},
	}}
	h.Sort()
	res, err := lin.Check(context.Background(), account{}, h, lin.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Verdict)
	cx := res.Counterexample
	fmt.Println("could not be placed:", h.Ops[cx.Failing].Describe())
	fmt.Println("counterexample:", cx.Ops, "from", cx.Start, "after", cx.Before, "operation")
	// Output:
	// not linearizable
	// could not be placed: withdraw(70) -> true
	// counterexample: [1 2] from [100] after 1 operation
}
