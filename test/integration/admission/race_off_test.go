//go:build !race

package admission

// raceDetector: the tests run under -race, several times slower.
const raceDetector = false
