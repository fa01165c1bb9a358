// SPDX-License-Identifier: GPL-2.0
//
// xiw-target (the responder on the device under test, xiw-target.cc) as
// xiw-peer drives it: a child process that takes one command line on its
// stdin and answers with one line on its stdout.

#ifndef XIW_PEER_TARGET_H
#define XIW_PEER_TARGET_H

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace xiw::peer {

// One answer: "ok ..." or "err ...", split into words and key=value pairs.
struct Reply {
	bool ok = false;
	std::string line;
	std::map<std::string, std::string> kv;
	std::vector<std::string> words;

	// The value of @k; throws Failure when the reply has none.
	const std::string &at(const std::string &k) const;
};

class Target {
public:
	Target() = default;
	~Target() { stop(); }
	Target(const Target &) = delete;
	Target &operator=(const Target &) = delete;

	// Start @path listening on @addr port @port, its commands waiting at
	// most @wait seconds by default; throws Failure unless it says "ready"
	// within 30 s.
	void start(const std::string &path, const std::string &addr, uint16_t port, double wait);
	// Has the target exited?  Reaps it and describes how.
	bool dead(std::string &how);
	// quit, then SIGKILL after 5 s.
	void stop();
	bool running() const { return pid_ > 0; }

	// Send a command and read its answer; throws Failure when the target
	// does not answer within @timeout seconds (0: 30 s more than the
	// target's own default wait) or is gone.
	Reply cmd(const std::string &c, double timeout = 0);
	// As cmd(), and an "err" answer throws Failure too.
	Reply must(const std::string &c, double timeout = 0);

private:
	std::string line(double timeout);

	pid_t pid_ = 0;
	double wait_ = 10;	// the target's default wait (its -T)
	int wfd_ = -1, rfd_ = -1;
	std::string buf_;
};

} // namespace xiw::peer

#endif
