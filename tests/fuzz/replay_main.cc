// SPDX-License-Identifier: GPL-2.0
// Standalone driver for builds without libFuzzer: runs the target over
// every file named on the command line or found in a named directory,
// so the checked-in corpus is a regression test under plain gcc.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const std::filesystem::path &p)
{
	std::ifstream in(p, std::ios::binary);
	std::vector<uint8_t> buf((std::istreambuf_iterator<char>(in)),
				 std::istreambuf_iterator<char>());

	if (!in.good() && !in.eof()) {
		fprintf(stderr, "cannot read %s\n", p.c_str());
		return 1;
	}
	LLVMFuzzerTestOneInput(buf.data(), buf.size());
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = 0;
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		std::filesystem::path p(argv[i]);

		if (std::filesystem::is_directory(p)) {
			for (auto &e : std::filesystem::directory_iterator(p)) {
				if (e.is_regular_file()) {
					bad |= run_file(e.path());
					n++;
				}
			}
		} else {
			bad |= run_file(p);
			n++;
		}
	}
	printf("replayed %zu inputs\n", n);
	return bad || n == 0;
}
