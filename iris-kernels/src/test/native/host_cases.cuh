// host_cases.cuh: the input loop of the host programs that answer one case a line, and their
// failures.
#pragma once

#include <iostream>
#include <sstream>
#include <string>

namespace host {

/// A case's failure: "error " and the parts, each as an ostream writes it.
template <class... Parts>
std::string fail(const Parts&... parts) {
    std::ostringstream out;
    out << "error ";
    (out << ... << parts);
    return out.str();
}

/// Prints `answer(what, rest)` for each line of standard input, `what` being its first word and
/// `rest` the stream of the words after it; blank lines are skipped.
template <class Answer>
int answer_cases(Answer&& answer) {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string what;
        if (in >> what) std::cout << answer(what, in) << "\n";
    }
    return 0;
}

}  // namespace host
