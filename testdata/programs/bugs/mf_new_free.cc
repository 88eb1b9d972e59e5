/* mf_new_free.cc: an object from new released with free() by C-style
   cleanup code, through a struct field.

   Registry::add() creates each Entry with new (the root) and keeps it in
   a fixed array of a C-style struct; registry_clear(), written as for a
   C library, frees the entries with free() (the symptom). Entry has a
   trivial destructor, so natively nothing visible breaks (glibc's
   operator new is malloc).

   Output: "entries 3 total 60". */
// expect: mismatched_free
// memcheck: yes
#include <cstdio>
#include <cstdlib>

struct Entry {
    int key;
    int value;
};

struct Registry {
    Entry *slots[8];
    int n;
};

__attribute__((noinline)) static void registry_add(Registry *r, int key, int value)
{
    Entry *e = new Entry; //@ root=mismatched_free
    e->key = key;
    e->value = value;
    r->slots[r->n++] = e;
}

__attribute__((noinline)) static int registry_total(const Registry *r)
{
    int t = 0;
    for (int i = 0; i < r->n; i++)
        t += r->slots[i]->value;
    return t;
}

__attribute__((noinline)) static void registry_clear(Registry *r)
{
    for (int i = 0; i < r->n; i++)
        std::free(r->slots[i]); //@ bug=mismatched_free
    r->n = 0;
}

int main()
{
    Registry r;
    r.n = 0;
    for (int k = 1; k <= 3; k++)
        registry_add(&r, k, 10 * k);
    std::printf("entries %d total %d\n", r.n, registry_total(&r));
    registry_clear(&r);
    return 0;
}
