/* mf_malloc_delete.cc: a block from malloc released with delete, in
   another function.

   make_points() gets n Points with malloc (the root: the allocation whose
   allocator does not match), as a C library would; the C++ caller fills
   and prints them and destroy() releases them with delete (the symptom):
   operator delete on memory malloc gave. Natively glibc's operator
   delete calls free, so nothing visible breaks.

   Output: "points (0,0) (1,2) (2,4)". */
// expect: mismatched_free
// memcheck: yes
#include <cstdio>
#include <cstdlib>

struct Point {
    int x, y;
};

__attribute__((noinline)) static Point *make_points(int n)
{
    Point *p = static_cast<Point *>(std::malloc(n * sizeof(Point))); //@ root=mismatched_free
    return p;
}

__attribute__((noinline)) static void destroy(Point *p)
{
    delete p; //@ bug=mismatched_free
}

int main()
{
    Point *ps = make_points(3);
    std::printf("points");
    for (int i = 0; i < 3; i++) {
        ps[i].x = i;
        ps[i].y = 2 * i;
        std::printf(" (%d,%d)", ps[i].x, ps[i].y);
    }
    std::printf("\n");
    destroy(ps);
    return 0;
}
