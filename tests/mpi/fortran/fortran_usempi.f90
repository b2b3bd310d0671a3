! critpath — tests/mpi/fortran/fortran_usempi.f90: the same program with use mpi.
program fortran_usempi
  use mpi
  implicit none
  include 'fortran_body.inc'
end program fortran_usempi
