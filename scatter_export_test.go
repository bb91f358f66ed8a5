package gpu

// BincountValueErr exports bincountValueErr, Bincount's decision on its largest value,
// for the tests of values whose bins no test can afford to make.
var BincountValueErr = bincountValueErr
