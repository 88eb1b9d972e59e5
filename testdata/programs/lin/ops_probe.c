/* ops_probe.c: a small bounded stack used by several threads, for the
   operations-file extractor (lin/tracehist).

   Exercises: op functions with int arguments (stk_push), struct pointer
   out-parameters whose members are arrays and nested structs
   (struct elem's d[0], d[1] and s.x, written by stk_pop and stk_peek), an
   int array out-parameter (stk_top2), a char * string argument
   (stk_push_name) and a char array member (struct stk's label), a _Bool
   result (stk_has), a pop that finds the stack empty (stk_pop returns 0),
   a try-push that gives up on a full stack (stk_try_push returns 0), a
   recursive op function that also calls another op function (stk_fill
   calls itself and stk_push), and an op function that a thread is still
   inside when the program exits (stk_wait_pop blocks in read(2) on a pipe
   nobody writes; main exits once that thread is inside).

   The threads run one after another (each is joined before the next is
   created) so that the history is the same in every run:
     main:     push(s1, 1)                                   CALL-MAIN
     worker_a: push(s1, 10) pop(s1) -> 10 pop(s1) -> 1        CALL-A1..A3
               pop(s1) -> empty  has(s1, 10) -> false         CALL-A4, A5
               push_name(s1, "hello") (pushes 5)              CALL-A6
               pop(s1) -> 5                                   CALL-A7
     worker_b: fill(s2, 3) -> 3 (pushes 1 2 3 recursively)    CALL-B1
               try_push(s2, 7) -> 1  try_push(s2, 8) -> 0     CALL-B2, B3
               top2(s2) -> 7 3  peek(s2) -> d[1] 107, s.x -7  CALL-B4, B5
     worker_c: wait_pop(s2), never returns                    CALL-C1
   s1 and s2 are two objects; s2 is full (4 elements) after try_push(7).

   Usage: ops_probe (no arguments).

   Output (stdout): "ops_probe one 0 two 4" (the labels and sizes at the
   end), then the program exits with status 0 while worker_c is blocked.
   The labels are initialized data that only this printf reads, after the
   operations: an extractor that reads s1's label at push_name's call
   learns its value from these later loads.

   A test should assert that output. In a trace recorded with
   ops_probe.lin: the operations above with their inputs and outputs, s1's
   and s2's histories, try_push(8) dropped, the recursion and the nested
   stk_push calls inside fill part of fill, wait_pop pending, and every
   operation's source on its CALL- line. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OP __attribute__((noinline, noclone))
#define CAP 4

struct elem {
	int d[2];
	struct {
		long x;
		long y;
	} s;
};

struct stk {
	int n;
	int items[CAP];
	char label[8];
};

struct stk s1 = {0, {0}, "one"};
struct stk s2 = {0, {0}, "two"};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static sem_t inside;
static int pipefd[2];

OP void stk_push(struct stk *s, int v)
{
	pthread_mutex_lock(&mu);
	if (s->n < CAP)
		s->items[s->n++] = v;
	pthread_mutex_unlock(&mu);
}

OP int stk_try_push(struct stk *s, int v)
{
	int ok = 0;
	pthread_mutex_lock(&mu);
	if (s->n < CAP) {
		s->items[s->n++] = v;
		ok = 1;
	}
	pthread_mutex_unlock(&mu);
	return ok;
}

OP void stk_push_name(struct stk *s, const char *name)
{
	stk_push(s, (int)strlen(name));
}

OP int stk_pop(struct stk *s, struct elem *out)
{
	int ok = 0;
	pthread_mutex_lock(&mu);
	if (s->n > 0) {
		int v = s->items[--s->n];
		out->d[0] = v;
		out->d[1] = v + 100;
		out->s.x = -v;
		out->s.y = 0;
		ok = 1;
	}
	pthread_mutex_unlock(&mu);
	return ok;
}

OP _Bool stk_has(struct stk *s, int v)
{
	_Bool found = 0;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < s->n; i++)
		if (s->items[i] == v)
			found = 1;
	pthread_mutex_unlock(&mu);
	return found;
}

/* stk_fill pushes 1..n, deepest call first; it returns n. */
OP int stk_fill(struct stk *s, int n)
{
	if (n <= 0)
		return 0;
	int below = stk_fill(s, n - 1);
	stk_push(s, n);
	return below + 1;
}

OP void stk_top2(struct stk *s, int out[2])
{
	pthread_mutex_lock(&mu);
	out[0] = s->items[s->n - 1];
	out[1] = s->items[s->n - 2];
	pthread_mutex_unlock(&mu);
}

OP void stk_peek(struct stk *s, struct elem *out)
{
	pthread_mutex_lock(&mu);
	int v = s->items[s->n - 1];
	out->d[0] = v;
	out->d[1] = v + 100;
	out->s.x = -v;
	out->s.y = 0;
	pthread_mutex_unlock(&mu);
}

/* stk_wait_pop tells main it is inside, then waits for ever. */
OP int stk_wait_pop(struct stk *s, struct elem *out)
{
	char c;
	sem_post(&inside);
	if (read(pipefd[0], &c, 1) == 1)
		return stk_pop(s, out);
	return 0;
}

static void *worker_a(void *arg)
{
	struct elem e;
	(void)arg;
	stk_push(&s1, 10); /* CALL-A1 */
	stk_pop(&s1, &e); /* CALL-A2 */
	stk_pop(&s1, &e); /* CALL-A3 */
	stk_pop(&s1, &e); /* CALL-A4 */
	if (stk_has(&s1, 10)) /* CALL-A5 */
		abort();
	stk_push_name(&s1, "hello"); /* CALL-A6 */
	stk_pop(&s1, &e); /* CALL-A7 */
	return NULL;
}

static void *worker_b(void *arg)
{
	struct elem e;
	int top[2];
	(void)arg;
	stk_fill(&s2, 3); /* CALL-B1 */
	stk_try_push(&s2, 7); /* CALL-B2 */
	stk_try_push(&s2, 8); /* CALL-B3 */
	stk_top2(&s2, top); /* CALL-B4 */
	stk_peek(&s2, &e); /* CALL-B5 */
	return NULL;
}

static void *worker_c(void *arg)
{
	struct elem e;
	(void)arg;
	stk_wait_pop(&s2, &e); /* CALL-C1 */
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pipe(pipefd) != 0 || sem_init(&inside, 0, 0) != 0) {
		perror("ops_probe");
		return 1;
	}
	stk_push(&s1, 1); /* CALL-MAIN */
	pthread_create(&t, NULL, worker_a, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, worker_b, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, worker_c, NULL);
	sem_wait(&inside);
	printf("ops_probe %s %d %s %d\n", s1.label, s1.n, s2.label, s2.n);
	fflush(stdout);
	exit(0);
}
