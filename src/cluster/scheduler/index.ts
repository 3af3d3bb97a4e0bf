/** The embedded cluster's default-scheduler: the shell (watch, queue, bind, events) over the pure core. */

export { MESSAGES_1_33, MESSAGES_1_35, type MessageStyle } from './core/index.ts';
export { type EventType, SeriesEventRecorder } from './events.ts';
export {
  DEFAULT_SCHEDULER_NAME,
  type SchedulerHandle,
  type SchedulerLog,
  type SchedulerOptions,
  type SchedulerStats,
  startScheduler,
} from './scheduler.ts';
