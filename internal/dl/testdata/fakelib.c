// A fake C library for the tests of package dl: a thread-local "current context" with
// the CUDA driver's conventions, functions that return what they were given, and one
// that blocks.

#include <stdint.h>
#include <string.h>
#include <unistd.h>

static __thread uintptr_t current;
static volatile int gets, sets;

int fake_get(uintptr_t *c) {
	__sync_fetch_and_add(&gets, 1);
	*c = current;
	return 0;
}

// fake_set fails with 201 (CUDA_ERROR_INVALID_CONTEXT) for the context 0xbad.
int fake_set(uintptr_t c) {
	__sync_fetch_and_add(&sets, 1);
	if (c == 0xbad) return 201;
	current = c;
	return 0;
}

int fake_get_fails(uintptr_t *c) {
	(void)c;
	return 3;
}

// fake_current returns the calling thread's current context.
uintptr_t fake_current(void) { return current; }

// fake_counts returns the number of calls of fake_get and fake_set and resets them.
void fake_counts(int *g, int *s) {
	*g = __sync_lock_test_and_set(&gets, 0);
	*s = __sync_lock_test_and_set(&sets, 0);
}

// fake_sum24 returns the sum of (i+1)*a[i] over its 24 arguments, so that every
// argument's position counts.
uint64_t fake_sum24(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5,
		uint64_t a6, uint64_t a7, uint64_t a8, uint64_t a9, uint64_t a10, uint64_t a11,
		uint64_t a12, uint64_t a13, uint64_t a14, uint64_t a15, uint64_t a16, uint64_t a17,
		uint64_t a18, uint64_t a19, uint64_t a20, uint64_t a21, uint64_t a22, uint64_t a23) {
	uint64_t a[24] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11,
		a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23};
	uint64_t s = 0;
	for (int i = 0; i < 24; i++) s += (uint64_t)(i + 1) * a[i];
	return s;
}

// fake_sum9 is fake_sum24 for 9 arguments (three on the stack on amd64).
uint64_t fake_sum9(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5,
		uint64_t a6, uint64_t a7, uint64_t a8) {
	return a0 + 2 * a1 + 3 * a2 + 4 * a3 + 5 * a4 + 6 * a5 + 7 * a6 + 8 * a7 + 9 * a8;
}

// fake_narrow takes the C types narrower than a register and writes them out widened.
int fake_narrow(int i, unsigned u, unsigned char c, unsigned short s, int64_t *out) {
	out[0] = i;
	out[1] = u;
	out[2] = c;
	out[3] = s;
	return -7;
}

// fake_fill writes n bytes of v at p (a Go buffer) and returns p.
void *fake_fill(void *p, int v, size_t n) { return memset(p, v, n); }

// fake_string returns a C string.
const char *fake_string(void) { return "hello from C"; }

// fake_sleep_us sleeps us microseconds in the C library and returns us.
unsigned fake_sleep_us(unsigned us) {
	usleep(us);
	return us;
}

static volatile int counter;

// fake_count_to counts its calls: it returns 0, or 5 once it has been called k times.
int fake_count_to(int k) { return ++counter >= k ? 5 : 0; }

// fake_counter returns the count and resets it.
int fake_counter(void) {
	int c = counter;
	counter = 0;
	return c;
}
