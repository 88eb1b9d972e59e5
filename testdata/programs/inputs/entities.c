/* entities: reads its input in every way inputs.Read follows, for the
 * input entity tests (inputs/record_test.go). argv[1] names a file of at
 * least 26 bytes; standard input is read to its end.
 *
 * In order: read 10 bytes of the file; pread 5 at offset 20; readv 4 and
 * 6 into two buffers; lseek to 0 and read 3; dup the descriptor, read 2
 * through the copy and 1 through the original; mmap the file's first page;
 * read standard input; recv "ping!" and recvmsg "msg" + "-data" on a
 * socketpair; read "pipe data" from a pipe. report() prints a checksum of
 * everything (the tests record a region from it too). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static char first[16], second[16]; /* readv's buffers, not adjacent */
static char got[4096];
static size_t ngot;

static void keep(const char *b, ssize_t n)
{
	if (n > 0 && ngot + n <= sizeof got) {
		memcpy(got + ngot, b, n);
		ngot += n;
	}
}

__attribute__((noinline)) static void report(const char *map)
{
	unsigned sum = 0;
	for (size_t i = 0; i < ngot; i++)
		sum = sum * 31 + (unsigned char)got[i];
	for (int i = 0; i < 26; i++)
		sum = sum * 31 + (unsigned char)map[i];
	printf("%zu bytes, checksum %u\n", ngot, sum);
}

int main(int argc, char **argv)
{
	char buf[128];
	if (argc < 2)
		return 2;
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		return 3;
	keep(buf, read(fd, buf, 10));
	keep(buf, pread(fd, buf, 5, 20));
	struct iovec iov[2] = {{first, 4}, {second, 6}};
	if (readv(fd, iov, 2) != 10)
		return 4;
	keep(first, 4);
	keep(second, 6);
	lseek(fd, 0, SEEK_SET);
	keep(buf, read(fd, buf, 3));
	int fd2 = dup(fd);
	keep(buf, read(fd2, buf, 2));
	keep(buf, read(fd, buf, 1));
	const char *map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return 5;
	close(fd2);
	close(fd);

	ssize_t n;
	while ((n = read(0, buf, sizeof buf)) > 0)
		keep(buf, n);

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 6;
	if (write(sv[1], "ping!", 5) != 5)
		return 7;
	keep(buf, recv(sv[0], buf, 5, 0));
	if (write(sv[1], "msg-data", 8) != 8)
		return 8;
	struct iovec mv[2] = {{first, 3}, {second, 5}};
	struct msghdr msg = {0};
	msg.msg_iov = mv;
	msg.msg_iovlen = 2;
	if (recvmsg(sv[0], &msg, 0) != 8)
		return 9;
	keep(first, 3);
	keep(second, 5);

	int p[2];
	if (pipe(p) != 0)
		return 10;
	if (write(p[1], "pipe data", 9) != 9)
		return 11;
	keep(buf, read(p[0], buf, 9));
	report(map);
	return 0;
}
