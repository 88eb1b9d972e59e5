/*
 * fig43.c: relevant input analysis golden test, after figure 4.3 of Yan
 * Wang's dissertation ("Dynamic Analysis Techniques for Effective and
 * Efficient Debugging", UC Riverside, 2014): integers are read into an
 * array, then summed by sign until a 0. Each integer is one byte of the
 * input file (argv[1]), read with read(2), so that each is one input
 * entity: the test's input is the bytes {3, -15, 0}.
 *
 * Prints posSum and negSum ("3" and "-15"). inputs/relevant_test.go
 * asserts the DERIVED, CINFLUENCED and AINFLUENCED sets of the figure's
 * rows at the lines marked //@ NAME (FILE:LINE#K).
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int data[100];
int posSum = 0;
int negSum = 0;

int main(int argc, char **argv)
{
	int fd = open(argc > 1 ? argv[1] : "/dev/null", O_RDONLY);
	int dt;
	int i;
	int num = 0;
	signed char c;

	while (num < 100) {
		if (read(fd, &c, 1) != 1)
			break;
		dt = c;           //@ read
		data[num] = dt;   //@ store
		num++;
	}
	i = 0;
	while (i < num) {     //@ loop
		dt = data[i];     //@ load
		if (dt == 0)      //@ zero
			break;
		if (dt > 0)       //@ pos
			posSum += dt; //@ possum
		else
			negSum += dt; //@ negsum
		i++;              //@ inc
	}
	printf("%d\n", posSum); //@ printpos
	printf("%d\n", negSum); //@ printneg
	close(fd);
	return 0;
}
