#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# pyverbs_run.py SUITE DEV OUT [ARG...]: run rdma-core's pyverbs test suite
# (the "tests" package in the directory SUITE, unpacked from
# /usr/share/doc/rdma-core/tests) against the RDMA device DEV and write one
# line per test to OUT:
#
#	<status> <test id> [<reason>]
#
# status is ok, fail, error, skip, xfail or xpass; reason is the skip
# message or the last line of the failure.  ARGs go to the suite's own
# argument parser (--port, --gid) and then to unittest (test name patterns
# such as tests.test_cq); --seed N (first) seeds the random values the
# suite draws (queue sizes, create masks) for a repeatable run.  The
# suite's verbose output goes to stdout.
# Exit status: 0 when the run completed (whatever the outcomes), 2 when
# the suite could not be loaded.

import importlib.util
import os
import random
import sys
import traceback
import unittest


def last_line(err):
	text = ''.join(traceback.format_exception(*err)).strip()
	return text.splitlines()[-1] if text else ''


class Recorder(unittest.TextTestResult):
	"""Verbose text result that also keeps (status, id, reason) tuples."""

	def __init__(self, *args, **kwargs):
		super().__init__(*args, **kwargs)
		self.outcomes = []

	def addSuccess(self, test):
		super().addSuccess(test)
		self.outcomes.append(('ok', test.id(), ''))

	def addFailure(self, test, err):
		super().addFailure(test, err)
		self.outcomes.append(('fail', test.id(), last_line(err)))

	def addError(self, test, err):
		super().addError(test, err)
		# setUpClass errors come as a _ErrorHolder without a real id
		self.outcomes.append(('error', test.id(), last_line(err)))

	def addSkip(self, test, reason):
		super().addSkip(test, reason)
		self.outcomes.append(('skip', test.id(), reason))

	def addExpectedFailure(self, test, err):
		super().addExpectedFailure(test, err)
		self.outcomes.append(('xfail', test.id(), last_line(err)))

	def addUnexpectedSuccess(self, test):
		super().addUnexpectedSuccess(test)
		self.outcomes.append(('xpass', test.id(), ''))


def main():
	if len(sys.argv) < 4:
		print('usage: pyverbs_run.py SUITE DEV OUT [ARG...]', file=sys.stderr)
		return 2
	suite_dir, dev, out = sys.argv[1:4]
	rest = sys.argv[4:]
	seed = 0
	if rest[:1] == ['--seed'] and len(rest) > 1:
		seed = int(rest[1])
		rest = rest[2:]
	pkg_dir = os.path.join(suite_dir, 'tests')
	init = os.path.join(pkg_dir, '__init__.py')
	if not os.path.exists(init):
		print(f'pyverbs_run: no {init}', file=sys.stderr)
		return 2

	# The suite imports its argument parser as a top-level module and
	# parses sys.argv itself, leaving what it does not know for unittest.
	sys.path.insert(0, pkg_dir)
	sys.argv = [sys.argv[0], '--dev', dev, '-v'] + rest
	from args_parser import parser
	parser.parse_args()
	names = [a for a in sys.argv[1:] if not a.startswith('-')]

	spec = importlib.util.spec_from_file_location(
		'tests', init, submodule_search_locations=[pkg_dir])
	tests = importlib.util.module_from_spec(spec)
	sys.modules['tests'] = tests
	spec.loader.exec_module(tests)

	random.seed(seed)
	loader = unittest.TestLoader()
	if names:
		suite = loader.loadTestsFromNames(names)
	else:
		suite = loader.loadTestsFromModule(tests)
	runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2,
					 resultclass=Recorder)
	result = runner.run(suite)
	with open(out, 'w') as f:
		for status, tid, reason in result.outcomes:
			reason = ' '.join(str(reason).split())
			f.write(f'{status} {tid} {reason}'.rstrip() + '\n')
	return 0


if __name__ == '__main__':
	sys.exit(main())
