/** Durations in annotations and configuration use Go's syntax (time.ParseDuration), as upstream. */
export { formatGoDuration, parseGoDuration } from '../../kube/duration.ts';
