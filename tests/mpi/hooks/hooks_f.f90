! critpath — tests/mpi/hooks/hooks_f.f90: a Fortran program built with critpath-f90.
!
! Known answers (per rank, 2 iterations):
!   .../compute            inclusive 2 x 100 ms = 0.200 s, own sleeps 2 x 40 ms
!   .../compute/kernel     inclusive 2 x 60 ms = 0.120 s
!   (sleep_ms is instrumented too: the sleeping time sits in .../work::sleep_ms)
!   .../halo               a user region (Fortran module `critpath`) around MPI_Allreduce
! MPICH only: Open MPI 4.1's Fortran bindings do not call the C MPI_* symbols, so a C PMPI
! layer sees nothing of a Fortran program there (not even MPI_Finalize).
module work
  use, intrinsic :: iso_c_binding, only: c_int, c_long
  implicit none
  ! Sleeps to absolute CLOCK_MONOTONIC deadlines, so durations hold on a loaded machine.
  type, bind(C) :: timespec
    integer(c_long) :: sec, nsec
  end type
  interface
    integer(c_int) function clock_gettime(id, ts) bind(C, name="clock_gettime")
      import :: c_int, timespec
      integer(c_int), value :: id
      type(timespec), intent(out) :: ts
    end function
    integer(c_int) function clock_nanosleep(id, flags, req, rem) bind(C, name="clock_nanosleep")
      import :: c_int, timespec
      integer(c_int), value :: id, flags
      type(timespec), intent(in) :: req
      type(timespec), intent(out) :: rem
    end function
  end interface
  type(timespec) :: deadline
contains
  subroutine clock_start()
    integer :: rc
    rc = clock_gettime(1_c_int, deadline)
  end subroutine
  subroutine sleep_ms(ms)
    integer, intent(in) :: ms
    integer :: rc
    type(timespec) :: rem
    deadline%nsec = deadline%nsec + int(ms, c_long) * 1000000_c_long
    do while (deadline%nsec >= 1000000000_c_long)
      deadline%nsec = deadline%nsec - 1000000000_c_long
      deadline%sec = deadline%sec + 1
    end do
    rc = clock_nanosleep(1_c_int, 1_c_int, deadline, rem)
  end subroutine
  subroutine kernel()
    call sleep_ms(60)
  end subroutine
  subroutine compute()
    call sleep_ms(20)
    call kernel()
    call sleep_ms(20)
  end subroutine
end module work

program hooks_f
  use mpi
  use critpath
  use work
  implicit none
  integer :: ierr, i, r
  double precision :: x, y
  call MPI_Init(ierr)
  call clock_start()
  do i = 1, 2
    call compute()
  end do
  r = critpath_region_define("halo")
  call critpath_enter(r)
  x = 1.0d0
  call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call critpath_exit(r)
  call MPI_Finalize(ierr)
end program hooks_f
