// SPDX-License-Identifier: GPL-2.0
//
// xiw-cm-test --race: connections torn down while their TERMINATEs are on
// the way, while the devices under them may go away (xiw_cm_race.cc).

#ifndef XIW_CM_RACE_H
#define XIW_CM_RACE_H

#include <sys/socket.h>

#include <cstdint>

namespace xiw::cm_race {

struct Options {
	sockaddr_storage srv;	// the listener's address and port
	sockaddr_storage cli;	// the clients' address (port 0)
	double seconds;		// how long new connections are started
	unsigned conns;		// client connections in flight at once
	uint64_t seed;		// the random choices
};

// Run the race for @o.seconds, then tear down what is left.  Prints one
// KTAP case (and its counts as diagnostics); returns the exit status: 0
// passed, 1 failed, 2 setup error.
int run(const Options &o);

} // namespace xiw::cm_race

#endif
