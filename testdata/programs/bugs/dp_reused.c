/* dp_reused.c: dangling read after the freed block was reused by a new
   allocation of the same size.

   msg_send() remembers the message it sent in the global last_msg.
   msg_done() frees the message (the root). main then allocates the next
   message, of the same size: natively glibc hands back the very same
   block (its tcache), so last_msg now points at a live block again, the
   wrong one. log_last() reads last_msg->id (the symptom): natively it
   reads the new message's id, 2, without any crash. A checker that only
   asks "is this address allocated now?" misses it; the pointer's value
   still comes from the first malloc. Memcheck delays reuse (its freed
   blocks wait in a queue, --freelist-vol), so under memcheck the blocks
   differ and it reports the invalid read.

   Output natively: "sent 1 first", "reused yes", "last id 2".
   Under Valgrind (no reuse): "reused no" and whatever the freed block
   holds. */
// expect: dangling_pointer_deref
// memcheck: yes
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct msg {
    int id;
    int len;
    char text[24];
};

static struct msg *last_msg;

__attribute__((noinline)) static struct msg *msg_new(int id, const char *text)
{
    struct msg *m = malloc(sizeof *m);
    m->id = id;
    m->len = (int)strlen(text);
    snprintf(m->text, sizeof m->text, "%s", text);
    return m;
}

__attribute__((noinline)) static void msg_send(struct msg *m)
{
    printf("sent %d %s\n", m->id, m->text);
    last_msg = m;
}

__attribute__((noinline)) static void msg_done(struct msg *m)
{
    free(m); //@ root=dangling_pointer_deref
}

__attribute__((noinline)) static void log_last(void)
{
    printf("last id %d\n", last_msg->id); //@ bug=dangling_pointer_deref
}

int main(void)
{
    struct msg *a = msg_new(1, "first");
    uintptr_t old = (uintptr_t)a;
    struct msg *b;

    msg_send(a);
    msg_done(a);
    b = msg_new(2, "second");
    printf("reused %s\n", (uintptr_t)b == old ? "yes" : "no");
    log_last();
    free(b);
    return 0;
}
