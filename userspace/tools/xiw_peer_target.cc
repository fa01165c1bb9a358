// SPDX-License-Identifier: GPL-2.0
//
// xiw-target driven over its stdin and stdout: see xiw_peer_target.h.

#include "xiw_peer_target.h"
#include "xiw_peer_wire.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <thread>

namespace xiw::peer {

using namespace std::chrono_literals;

const std::string &Reply::at(const std::string &k) const
{
	auto it = kv.find(k);
	if (it == kv.end())
		throw Failure("xiw-target reply has no " + k + ": " + line);
	return it->second;
}

void Target::start(const std::string &path, const std::string &addr, uint16_t port, double wait)
{
	int in[2], out[2];
	std::string p = std::to_string(port), w = std::to_string(wait);

	buf_.clear();
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		throw Failure("pipe failed");
	pid_ = fork();
	if (pid_ < 0)
		throw Failure("fork failed");
	if (!pid_) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(path.c_str(), path.c_str(), "-p", p.c_str(), "-T", w.c_str(), addr.c_str(),
		      (char *)nullptr);
		perror("exec xiw-target");
		_exit(127);
	}
	::close(in[0]);
	::close(out[1]);
	wfd_ = in[1];
	rfd_ = out[0];
	wait_ = wait;
	std::string l = line(30);
	if (l.rfind("ready", 0) != 0)
		throw Failure("xiw-target did not start: " + l);
}

bool Target::dead(std::string &how)
{
	int st;

	if (pid_ <= 0 || waitpid(pid_, &st, WNOHANG) != pid_)
		return false;
	how = WIFSIGNALED(st) ? fmt("killed by signal %d", WTERMSIG(st))
			      : fmt("exit status %d", WEXITSTATUS(st));
	pid_ = 0;
	stop();
	return true;
}

void Target::stop()
{
	if (wfd_ >= 0) {
		(void)!::write(wfd_, "quit\n", 5);
		::close(wfd_);
		wfd_ = -1;
	}
	for (int i = 0; pid_ > 0 && i < 100; i++) {
		if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
			pid_ = 0;
			break;
		}
		std::this_thread::sleep_for(50ms);
	}
	if (pid_ > 0) {
		kill(pid_, SIGKILL);
		waitpid(pid_, nullptr, 0);
		pid_ = 0;
	}
	if (rfd_ >= 0)
		::close(rfd_);
	rfd_ = -1;
}

Reply Target::cmd(const std::string &c, double timeout)
{
	std::string l = c + "\n";
	if (wfd_ < 0 || ::write(wfd_, l.data(), l.size()) != ssize_t(l.size()))
		throw Failure("xiw-target is gone (write " + c + ")");
	Reply r;
	r.line = line(timeout > 0 ? timeout : wait_ + 30);
	std::istringstream is(r.line);
	std::string w;
	while (is >> w) {
		r.words.push_back(w);
		auto eq = w.find('=');
		if (eq != std::string::npos)
			r.kv[w.substr(0, eq)] = w.substr(eq + 1);
	}
	r.ok = !r.words.empty() && r.words[0] == "ok";
	return r;
}

Reply Target::must(const std::string &c, double timeout)
{
	Reply r = cmd(c, timeout);
	if (!r.ok)
		throw Failure("xiw-target " + c + ": " + r.line);
	return r;
}

std::string Target::line(double timeout)
{
	auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(int(timeout * 1000));
	for (;;) {
		auto nl = buf_.find('\n');
		if (nl != std::string::npos) {
			std::string l = buf_.substr(0, nl);
			buf_.erase(0, nl + 1);
			return l;
		}
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			end - std::chrono::steady_clock::now()).count();
		if (left <= 0)
			throw Failure("xiw-target did not answer in time");
		pollfd pf = { rfd_, POLLIN, 0 };
		if (poll(&pf, 1, int(left)) <= 0)
			continue;
		char b[4096];
		ssize_t n = ::read(rfd_, b, sizeof(b));
		if (n <= 0)
			throw Failure("xiw-target exited");
		buf_.append(b, size_t(n));
	}
}

} // namespace xiw::peer
