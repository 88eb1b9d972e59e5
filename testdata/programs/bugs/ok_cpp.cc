/* ok_cpp.cc: correct C++ program: objects with new/delete, arrays with
   new[]/delete[] (including one with destructors, so with an array
   cookie), a std::vector and a std::string (the shape of the mf_
   programs, done right).

   Output: "shapes 3 area 29", "squares 0 1 4 9 16", "vector sum 10",
   "string hello, world 12", "destroyed 4". */
// expect: none
// memcheck: no
#include <cstdio>
#include <string>
#include <vector>

static int destroyed;

struct Shape {
    int w, h;
    Shape() : w(0), h(0) {}
    Shape(int w_, int h_) : w(w_), h(h_) {}
    ~Shape() { destroyed++; }
    int area() const { return w * h; }
};

__attribute__((noinline)) static int total_area(Shape *const *shapes, int n)
{
    int a = 0;
    for (int i = 0; i < n; i++)
        a += shapes[i]->area();
    return a;
}

int main()
{
    Shape *shapes[3] = {new Shape(2, 3), new Shape(4, 4), new Shape(7, 1)};
    std::printf("shapes 3 area %d\n", total_area(shapes, 3));
    for (int i = 0; i < 3; i++)
        delete shapes[i];

    int *sq = new int[5];
    for (int i = 0; i < 5; i++)
        sq[i] = i * i;
    std::printf("squares %d %d %d %d %d\n", sq[0], sq[1], sq[2], sq[3], sq[4]);
    delete[] sq;

    Shape *row = new Shape[1];
    row[0].w = 1;
    delete[] row;

    std::vector<int> v;
    for (int i = 1; i <= 4; i++)
        v.push_back(i);
    int sum = 0;
    for (int x : v)
        sum += x;
    std::printf("vector sum %d\n", sum);

    std::string s("hello");
    s += ", world";
    std::printf("string %s %zu\n", s.c_str(), s.size());
    std::printf("destroyed %d\n", destroyed);
    return 0;
}
