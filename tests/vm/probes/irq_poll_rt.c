// SPDX-License-Identifier: GPL-2.0
/*
 * irq_poll_rt: does irq_poll's softirq run in two tasks of one CPU at
 * once, so that one irq_poll entry is polled twice?
 *
 * lib/irq_poll.c keeps a per-CPU list of scheduled entries and relies on
 * one softirq runner per CPU: its poll loop takes the head entry with
 * interrupts enabled and trusts that only that entry's ->poll() removes
 * it.  A PREEMPT_RT kernel built without CONFIG_PREEMPT_RT_NEEDS_BH_LOCK
 * lets any task run pending softirqs at local_bh_enable() while another
 * task of the same CPU is preempted or blocked inside one.
 *
 * Two kthreads on CPU 0.  C (SCHED_FIFO) schedules entry A with bottom
 * halves off and runs the softirq at local_bh_enable(); A's poll blocks
 * on a spinlock (a sleeping lock on RT) that B holds.  B, now running,
 * schedules entry B the same way, which runs the softirq in B: if the
 * runners are not serialised, that poll loop finds A, still scheduled, at
 * the head of the list and polls it again; the second poll completes A
 * (list_del), and the first, when it resumes, finds A already off the
 * list.  In a real consumer the first would complete it too: a list_del
 * of LIST_POISON1, which is what ib_core's ib_poll_handler() hit.
 *
 * Only on PREEMPT_RT without the BH lock: elsewhere B could not run the
 * softirq while C holds it, and the probe would wait for itself.
 */
#include <linux/completion.h>
#include <linux/irq_poll.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/poison.h>
#include <linux/sched.h>
#include <linux/spinlock.h>

static struct irq_poll iop_a, iop_b;
static struct task_struct *task_c;
static atomic_t polls_of_a_now = ATOMIC_INIT(0);
static int polls_of_a, most_at_once, polls_of_b;
static bool completed_under_us;
/* Held by B while C's poll of A waits for it. */
static DEFINE_SPINLOCK(gate);
static DECLARE_COMPLETION(a_polling);
static DECLARE_COMPLETION(b_done);
static DECLARE_COMPLETION(c_done);

static int poll_a(struct irq_poll *iop, int budget)
{
	int now = atomic_inc_return(&polls_of_a_now);

	most_at_once = max(most_at_once, now);
	if (++polls_of_a == 1) {
		complete(&a_polling);
		spin_lock(&gate);
		spin_unlock(&gate);
		atomic_dec(&polls_of_a_now);
		if (iop->list.next == LIST_POISON1) {
			/* Completed by another poll while this one ran. */
			completed_under_us = true;
			return 0;
		}
		irq_poll_complete(iop);
		return 0;
	}
	atomic_dec(&polls_of_a_now);
	irq_poll_complete(iop);
	return 0;
}

static int poll_b(struct irq_poll *iop, int budget)
{
	polls_of_b++;
	irq_poll_complete(iop);
	return 0;
}

static void run_softirq_for(struct irq_poll *iop)
{
	local_bh_disable();
	irq_poll_sched(iop);
	local_bh_enable();
}

static int c_fn(void *unused)
{
	run_softirq_for(&iop_a);
	complete(&c_done);
	while (!kthread_should_stop())
		schedule_timeout_idle(HZ / 10);
	return 0;
}

static int b_fn(void *unused)
{
	unsigned long end = jiffies + 5 * HZ;

	spin_lock(&gate);
	wake_up_process(task_c);	/* C preempts B right here */
	while (!completion_done(&a_polling) && time_before(jiffies, end))
		cpu_relax();
	if (completion_done(&a_polling))
		run_softirq_for(&iop_b);
	spin_unlock(&gate);
	complete(&b_done);
	while (!kthread_should_stop())
		schedule_timeout_idle(HZ / 10);
	return 0;
}

static int __init irq_poll_rt_init(void)
{
	struct task_struct *b;

	if (!IS_ENABLED(CONFIG_PREEMPT_RT) ||
	    IS_ENABLED(CONFIG_PREEMPT_RT_NEEDS_BH_LOCK)) {
		pr_info("irq_poll_rt: softirq runners are serialised here: not run\n");
		return 0;
	}
	irq_poll_init(&iop_a, 64, poll_a);
	irq_poll_init(&iop_b, 64, poll_b);
	task_c = kthread_create(c_fn, NULL, "irq_poll_rt_c");
	if (IS_ERR(task_c))
		return PTR_ERR(task_c);
	b = kthread_create(b_fn, NULL, "irq_poll_rt_b");
	if (IS_ERR(b)) {
		kthread_stop(task_c);
		return PTR_ERR(b);
	}
	kthread_bind(task_c, 0);
	kthread_bind(b, 0);
	sched_set_fifo(task_c);
	wake_up_process(b);
	wait_for_completion(&b_done);
	if (completion_done(&a_polling))
		wait_for_completion(&c_done);
	kthread_stop(b);
	kthread_stop(task_c);
	pr_info("irq_poll_rt: entry A polled %d times, %d at once; B %d; A completed under a running poll: %s\n",
		polls_of_a, most_at_once, polls_of_b,
		completed_under_us ? "yes" : "no");
	return 0;
}

static void __exit irq_poll_rt_exit(void)
{
}

module_init(irq_poll_rt_init);
module_exit(irq_poll_rt_exit);
MODULE_DESCRIPTION("probe: concurrent irq_poll softirq runners on PREEMPT_RT");
MODULE_LICENSE("GPL");
