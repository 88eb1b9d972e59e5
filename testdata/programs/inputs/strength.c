/*
 * strength.c: relevant input analysis golden test, after the strength
 * tables of section 4.1.4 of Yan Wang's dissertation ("Dynamic Analysis
 * Techniques for Effective and Efficient Debugging", UC Riverside, 2014).
 * Every input byte is read with its own read(2) from the input file
 * (argv[1]) and is one input entity: the test's input is
 *   10, 0, 10, then 16 bytes of buf with buf[10] = 50 and buf[11] = 40.
 * Entities: 0 = x of value(), 1 = x of mapping(), 2 = x of address(),
 * 3..18 = buf[0..15].
 *
 * Prints a summary line. inputs/relevant_test.go asserts the sets with
 * their strength at the lines marked //@ NAME.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static int fd;
static signed char buf[16];
static volatile int sink;

static signed char input(void)
{
	signed char v = 0;
	if (read(fd, &v, 1) != 1)
		return 0;
	return v;
}

__attribute__((noinline)) static int f(int v)
{
	return v + 1;
}

/* Value dependence: copies keep strength, computation weakens. */
__attribute__((noinline)) static void value(void)
{
	int x, y, z, w;

	x = input();          //@ v1
	y = x;                //@ v2
	z = f(x);             //@ v3
	w = z;                //@ v4
	if (x == 10)          //@ v5
		sink = 1;
	if (x != 10)          //@ v6
		sink = 2;
	if (x > 0)            //@ v7
		sink = 3;
	sink = y + w;
}

/* Mapping chains: a constant assigned under an equality test. */
__attribute__((noinline)) static void mapping(void)
{
	int x, y, z, w = 0;

	y = 0;
	x = input();          //@ m1
	z = x;                //@ m2
	if (x == 0) {         //@ m3
		w = z;            //@ m4
		y = 1;            //@ m5
	}
	if (y < 100)          //@ m6
		sink = w;
}

/* Address dependence. */
__attribute__((noinline)) static void address(void)
{
	int x, y, z, w;
	int k;

	x = input();          //@ a1
	for (k = 0; k < 16; k++)
		buf[k] = input();
	z = buf[x];           //@ a2
	y = f(x);             //@ a3
	w = buf[y];           //@ a4
	if (z > 0)            //@ a5
		sink = w;
}

int main(int argc, char **argv)
{
	fd = open(argc > 1 ? argv[1] : "/dev/null", O_RDONLY);
	value();
	mapping();
	address();
	printf("sink %d\n", sink);
	close(fd);
	return 0;
}
