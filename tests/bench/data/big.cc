#include <bits/stdc++.h>
template <int N> struct Node {
  std::map<std::string, std::vector<Node<N - 1>>> kids;
  std::unordered_map<int, std::optional<std::string>> attrs;
  std::variant<int, double, std::string> v;
  auto weight() const {
    std::size_t w = attrs.size();
    for (auto& [k, vec] : kids)
      w += std::accumulate(vec.begin(), vec.end(), std::size_t{k.size()},
                           [](std::size_t a, const auto& n) { return a + n.weight(); });
    return w + std::visit([](const auto& x) { return sizeof(x); }, v);
  }
};
template <> struct Node<0> { int x; std::size_t weight() const { return x; } };
template <int... I> std::size_t all(std::integer_sequence<int, I...>) {
  return (Node<I % 20 + 1>{}.weight() + ...);
}
int main() {
  std::vector<std::string> s{"b", "a"};
  std::ranges::sort(s);
  std::regex re("a+b*");
  return static_cast<int>(all(std::make_integer_sequence<int, 80>{}) + std::regex_match(s[0], re));
}
