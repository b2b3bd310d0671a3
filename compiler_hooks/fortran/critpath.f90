! critpath — compiler_hooks/fortran/critpath.f90: the region API for Fortran.
!
!   use critpath
!   integer :: r
!   r = critpath_region_define("solver")     ! idempotent per name, thread-safe
!   call critpath_enter(r)
!   ...
!   call critpath_exit(r)
!
! Binds to the C API of include/critpath.h (critpath_region_define, critpath_enter,
! critpath_exit) through ISO_C_BINDING; the name is passed with its length, so no
! c_null_char is needed. critpath-f90 compiles with -I<module dir> and links this module's
! object; other compilers: add the same two things by hand. The procedures are safe to call
! before MPI_Init and after MPI_Finalize (they record nothing then).
module critpath
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_size_t
  implicit none
  private
  public :: critpath_region_define, critpath_enter, critpath_exit

  interface
    function c_region_define_n(name, length) bind(C, name="critpath_region_define_n") result(id)
      import :: c_int, c_char, c_size_t
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_size_t), value :: length
      integer(c_int) :: id
    end function
    subroutine c_enter(region) bind(C, name="critpath_enter")
      import :: c_int
      integer(c_int), value :: region
    end subroutine
    subroutine c_exit(region) bind(C, name="critpath_exit")
      import :: c_int
      integer(c_int), value :: region
    end subroutine
  end interface

contains

  ! Returns the region id of `name` (trailing blanks ignored), defining it on first use;
  ! 0 for an empty name (entering region 0 does nothing).
  integer function critpath_region_define(name)
    character(len=*), intent(in) :: name
    critpath_region_define = int(c_region_define_n(name, int(len_trim(name), c_size_t)))
  end function

  subroutine critpath_enter(region)
    integer, intent(in) :: region
    call c_enter(int(region, c_int))
  end subroutine

  subroutine critpath_exit(region)
    integer, intent(in) :: region
    call c_exit(int(region, c_int))
  end subroutine

end module critpath
