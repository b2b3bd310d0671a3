! critpath — tests/mpi/fortran/fortran_mpif.f90: a Fortran program using include 'mpif.h'.
program fortran_mpif
  implicit none
  include 'mpif.h'
  include 'fortran_body.inc'
end program fortran_mpif
