/* mf_array_delete.cc: an array from new[] released with scalar delete, in
   the same function.

   main allocates n ints with new[] (the root), fills and sums them, and
   releases them with delete instead of delete[] (the symptom). For int
   (no destructor, no array cookie) glibc's operator delete just frees the
   block, so natively nothing visible breaks.

   Output: "sum 45". */
// expect: mismatched_free
// memcheck: yes
#include <cstdio>

int main(int argc, char **)
{
    int n = argc + 9;
    int *v = new int[n]; //@ root=mismatched_free
    long sum = 0;

    for (int i = 0; i < n; i++)
        v[i] = i;
    for (int i = 0; i < n; i++)
        sum += v[i];
    std::printf("sum %ld\n", sum);
    delete v; //@ bug=mismatched_free
    return 0;
}
