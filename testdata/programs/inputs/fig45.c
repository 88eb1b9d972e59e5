/*
 * fig45.c: relevant input analysis golden test, after figure 4.5 of Yan
 * Wang's dissertation ("Dynamic Analysis Techniques for Effective and
 * Efficient Debugging", UC Riverside, 2014): is a tag's name "body"? The
 * name is read from the input file (argv[1]) one byte per read(2) call, so
 * that each character is one input entity: the test's input is "body\0".
 *
 * Prints "1". inputs/relevant_test.go asserts the sets of the figure's
 * rows at the lines marked //@ NAME (FILE:LINE#K), the mapping chain
 * \0= -> 0(cmp) -> BODY(tag) -> 1(seeBody) of the returned value above all.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

enum { OTHER = 1, BODY = 2 };

__attribute__((noinline)) int is_body(const char *name)
{
	const char *str = "body";
	int i = 0;
	int cmp = 1;
	int tag;
	int seeBody = 0;
	char c;

	c = name[i];              //@ c0
	while (c == str[i]) {     //@ while
		if (c == '\0') {      //@ end
			cmp = 0;          //@ cmp
			break;
		}
		i++;                  //@ inc
		c = name[i];          //@ next
	}
	if (c != str[i])          //@ differ
		cmp = c - str[i];
	tag = OTHER;              //@ other
	if (cmp == 0)             //@ ifcmp
		tag = BODY;           //@ tag
	if (tag == BODY)          //@ iftag
		seeBody = 1;          //@ see
	return seeBody;           //@ ret
}

int main(int argc, char **argv)
{
	char name[8] = {0};
	int fd = open(argc > 1 ? argv[1] : "/dev/null", O_RDONLY);
	int n = 0;

	while (n < 5 && read(fd, &name[n], 1) == 1)
		n++;
	printf("%d\n", is_body(name));
	close(fd);
	return 0;
}
