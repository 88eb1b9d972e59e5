/* calc: a small calculator for analyze reduce (docs/reduce.md). It reads
 * an expression file (argv[1], or standard input without one) and prints
 * the value of each line: integers, + - * /, unary minus and parentheses.
 * A division by zero at the top level of a line is reported ("division by
 * zero") and the line's value is taken with a divisor of 1.
 *
 * FAULT: the zero check is made only at depth 0, so a division by zero
 * inside parentheses reaches the division instruction and the program is
 * killed by SIGFPE. calc.failing (60 bytes) and calc-large.failing (40
 * expressions; the 24th) crash so; ddmin reduces the first to "(/": a
 * missing operand reads as 0 and a missing ')' is forgiven. */
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>

static const char *p;
static int depth;

static long expr(void);

static void skip(void)
{
	while (*p == ' ' || *p == '\t')
		p++;
}

static long factor(void)
{
	skip();
	if (*p == '(') {
		p++;
		depth++;
		long v = expr();
		depth--;
		skip();
		if (*p == ')')
			p++;
		return v;
	}
	if (*p == '-') {
		p++;
		return -factor();
	}
	if (isdigit((unsigned char)*p))
		return strtol(p, (char **)&p, 10);
	return 0;
}

static long term(void)
{
	long v = factor();
	for (skip(); *p == '*' || *p == '/'; skip()) {
		char op = *p++;
		long r = factor();
		if (op == '*') {
			v *= r;
			continue;
		}
		if (r == 0 && depth == 0) { /* FAULT: no check inside parentheses */
			fprintf(stderr, "division by zero\n");
			r = 1;
		}
		v /= r; /* CRASH */
	}
	return v;
}

static long expr(void)
{
	long v = term();
	for (skip(); *p == '+' || *p == '-'; skip()) {
		char op = *p++;
		long r = term();
		v = op == '+' ? v + r : v - r;
	}
	return v;
}

int main(int argc, char **argv)
{
	FILE *in = stdin;
	char line[256];

	if (argc > 1 && !(in = fopen(argv[1], "r"))) {
		perror(argv[1]);
		return 2;
	}
	while (fgets(line, sizeof line, in)) {
		p = line;
		depth = 0;
		long v = expr();
		skip();
		if (*p != '\n' && *p != '\0') {
			printf("error at '%c'\n", *p);
			continue;
		}
		printf("%ld\n", v);
	}
	return 0;
}
