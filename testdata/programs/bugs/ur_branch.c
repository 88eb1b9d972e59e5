/* ur_branch.c: an uninitialised heap field decides a branch, far from the
   allocation that left it unset.

   session_new() mallocs a session (the root) and sets its id and user but
   never its flags. session_is_admin(), called later from main, branches
   on s->flags (the symptom: the load and the conditional jump are on one
   line). Natively the fresh block is zero, so the answer is "no".

   Output: "session 1 alice", "admin no". */
// expect: uninitialized_read
// memcheck: yes
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct session {
    int id;
    int flags;
    char user[16];
};

static int admin_checks;

__attribute__((noinline)) static struct session *session_new(int id, const char *user)
{
    struct session *s = malloc(sizeof *s); //@ root=uninitialized_read
    s->id = id;
    snprintf(s->user, sizeof s->user, "%s", user);
    return s;
}

__attribute__((noinline)) static const char *session_is_admin(const struct session *s)
{
    if (s->flags & 1) { //@ bug=uninitialized_read
        admin_checks++;
        return "yes";
    }
    return "no";
}

int main(void)
{
    struct session *s = session_new(1, "alice");
    printf("session %d %s\n", s->id, s->user);
    printf("admin %s\n", session_is_admin(s));
    free(s);
    return 0;
}
