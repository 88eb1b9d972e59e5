/* threadread: four threads each read a file of their own (argv[1..4]) in
 * 3-byte reads through one shared table of descriptors, while the main
 * thread reads a pipe that another thread fills, for the input entity
 * tests (inputs/record_test.go): every system call's bytes must follow it
 * in the trace, on its own thread, whatever ran in between. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int pipefd[2];
static unsigned long sums[5];
static char **files;

static void *reader(void *arg)
{
	long i = (long)arg;
	char buf[3];
	int fd = open(files[i], O_RDONLY);
	ssize_t n;
	while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t k = 0; k < n; k++)
			sums[i] = sums[i] * 31 + (unsigned char)buf[k];
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void *writer(void *arg)
{
	for (int i = 0; i < 20; i++)
		if (write(pipefd[1], "0123456789", 10) != 10)
			break;
	close(pipefd[1]);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 5 || pipe(pipefd) != 0)
		return 2;
	files = argv + 1;
	pthread_t t[5];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, reader, (void *)i);
	pthread_create(&t[4], NULL, writer, NULL);
	char buf[7];
	ssize_t n;
	while ((n = read(pipefd[0], buf, sizeof buf)) > 0)
		for (ssize_t k = 0; k < n; k++)
			sums[4] = sums[4] * 31 + (unsigned char)buf[k];
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	printf("%lu %lu %lu %lu %lu\n", sums[0], sums[1], sums[2], sums[3], sums[4]);
	return 0;
}
